package server

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/adminpath"
	"github.com/lefia/edihub/internal/provision"
	"github.com/lefia/edihub/web"
)

// adminIntegrations lists the integrations the signed-in user may see, with
// their secrets; ?revoked=ID confirms a secret's revocation, shown only when
// the list bears it out.
func (s *Server) adminIntegrations(c echo.Context) error {
	revoked, _ := strconv.ParseInt(c.QueryParam("revoked"), 10, 64)
	return s.renderIntegrations(c, http.StatusOK, web.Integrations{Revoked: revoked})
}

// adminNewIntegrationSecret gives an integration a new secret, shown once
// in this answer; its current secrets work for the grace period the admin
// chose.
func (s *Server) adminNewIntegrationSecret(c echo.Context) error {
	id := c.Param("id")
	secret, err := s.changeBy(c, func(by provision.By) (string, error) {
		grace, err := graceOf(c)
		if err != nil {
			return "", err
		}
		return s.provision.AddIntegrationSecret(c.Request().Context(), by, id, c.FormValue("secret"), grace)
	})
	return answerChange(err, func(status int, problem string) error {
		return s.renderIntegrations(c, status, web.Integrations{NewSecret: secret, NewSecretFor: id, Problem: problem})
	})
}

// adminRevokeIntegrationSecret makes one secret of an integration stop
// working at once, then shows the list (a reload does not post again).
func (s *Server) adminRevokeIntegrationSecret(c echo.Context) error {
	secretID, err := strconv.ParseInt(c.Param("secret"), 10, 64)
	if err != nil || secretID <= 0 {
		return echo.ErrNotFound
	}
	_, err = s.changeBy(c, func(by provision.By) (string, error) {
		return "", s.provision.RevokeIntegrationSecrets(c.Request().Context(), by, c.Param("id"), secretID)
	})
	if err != nil {
		return answerChange(err, func(status int, problem string) error {
			return s.renderIntegrations(c, status, web.Integrations{Problem: problem})
		})
	}
	return c.Redirect(http.StatusSeeOther, adminpath.Path(adminpath.Integrations)+"?revoked="+url.QueryEscape(c.Param("secret")))
}

func (s *Server) renderIntegrations(c echo.Context, status int, view web.Integrations) error {
	var err error
	if view.List, err = s.provision.Integrations(c.Request().Context(), currentUser(c).Scope()); err != nil {
		return err
	}
	view.Now = time.Now()
	return render(c, status, web.AdminIntegrations(page(c, "Integrations", web.SectionIntegrations), view))
}
