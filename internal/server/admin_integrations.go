package server

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/adminpath"
	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/provision"
	"github.com/lefia/edihub/internal/signature"
	"github.com/lefia/edihub/web"
)

// adminIntegrations lists the integrations the signed-in user may see, with
// their secrets; ?revoked=ID confirms a secret's revocation, shown only when
// the list bears it out.
func (s *Server) adminIntegrations(c echo.Context) error {
	revoked, _ := strconv.ParseInt(c.QueryParam("revoked"), 10, 64)
	return s.renderIntegrations(c, http.StatusOK, web.Integrations{Revoked: revoked, ToleranceSet: c.QueryParam("tolerance")})
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

// adminSetIntegrationTolerance changes how far a delivery's signing time may
// be from edihub's clock, then shows the list with the integration marked
// (a reload does not post again).
func (s *Server) adminSetIntegrationTolerance(c echo.Context) error {
	id := c.Param("id")
	_, err := s.changeBy(c, func(by provision.By) (string, error) {
		seconds, err := strconv.Atoi(strings.TrimSpace(c.FormValue("tolerance_seconds")))
		if err != nil {
			return "", apperr.New(apperr.Invalid, "invalid-field", "give the signature tolerance in whole seconds, from %d to %d",
				int(signature.MinTolerance/time.Second), int(signature.MaxTolerance/time.Second))
		}
		return "", s.provision.SetIntegrationTolerance(c.Request().Context(), by, id, time.Duration(seconds)*time.Second)
	})
	if err != nil {
		return answerChange(err, func(status int, problem string) error {
			return s.renderIntegrations(c, status, web.Integrations{Problem: problem})
		})
	}
	return c.Redirect(http.StatusSeeOther, adminpath.Path(adminpath.Integrations)+"?tolerance="+url.QueryEscape(id)+"#integration-"+url.PathEscape(id))
}

func (s *Server) renderIntegrations(c echo.Context, status int, view web.Integrations) error {
	var err error
	if view.List, err = s.provision.Integrations(c.Request().Context(), currentUser(c).Scope()); err != nil {
		return err
	}
	view.Now = time.Now()
	view.WebhookBase = s.publicBase(c)
	return render(c, status, web.AdminIntegrations(page(c, "Integrations", web.SectionIntegrations), view))
}

// publicBase is the address senders reach edihub at: PUBLIC_URL when it is
// set, else the scheme and host this request came to.
func (s *Server) publicBase(c echo.Context) string {
	if s.cfg.Notify.PublicURL != "" {
		return s.cfg.Notify.PublicURL
	}
	return c.Scheme() + "://" + c.Request().Host
}
