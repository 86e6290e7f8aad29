package server

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/adminpath"
	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/notify"
	"github.com/lefia/edihub/internal/provision"
	"github.com/lefia/edihub/web"
)

// adminChannels lists the notification channels the user may see.
// ?deleted=<id> adds the notice a deletion redirects with.
func (s *Server) adminChannels(c echo.Context) error {
	list, err := s.provision.Channels(c.Request().Context(), currentUser(c).Scope())
	if err != nil {
		return err
	}
	v := web.Channels{List: list}
	if id, err := strconv.ParseInt(c.QueryParam("deleted"), 10, 64); err == nil && id > 0 {
		v.Deleted = id
	}
	return render(c, http.StatusOK, web.AdminChannels(page(c, "Notification channels", web.SectionChannels), v))
}

// adminNewChannel shows the form that creates a channel.
func (s *Server) adminNewChannel(c echo.Context) error {
	return s.renderNewChannel(c, http.StatusOK, web.ChannelForm{Kind: notify.KindEmail})
}

// adminCreateChannel creates a channel for alerts of a tenant the admin may
// see, or, for a global admin, a global one, and shows a webhook's signing
// secret, once. An invalid address, a URL the egress policy refuses or a
// bad secret is explained on the form.
func (s *Server) adminCreateChannel(c echo.Context) error {
	ctx := c.Request().Context()
	u := currentUser(c)
	f := channelForm(c)
	f.Tenant, f.Kind = c.FormValue("tenant"), c.FormValue("kind")
	id, secret, err := s.createChannel(c, u, f)
	if problem, ok := formProblem(err); ok {
		f.Problem = problem
		return s.renderNewChannel(c, statusOfError(err), f)
	}
	if err != nil {
		return err
	}
	ch, err := s.provision.Channel(ctx, u.Scope(), id)
	if err != nil {
		return err
	}
	return render(c, http.StatusCreated, web.AdminChannelCreated(page(c, "Channel created", web.SectionChannels), ch, secret))
}

// createChannel creates the channel of the form f for alerts of one of the
// tenants the user may see, or of every tenant for a global user: the
// form's list is the whole check, so a forged tenant is refused like a
// mistyped one.
func (s *Server) createChannel(c echo.Context, u auth.User, f web.ChannelForm) (int64, string, error) {
	ctx := c.Request().Context()
	tenants, err := s.auth.Tenants(ctx, u.Scope())
	if err != nil {
		return 0, "", err
	}
	if f.Tenant == "" && u.TenantID != nil || f.Tenant != "" && !slices.Contains(tenants, f.Tenant) {
		return 0, "", apperr.New(apperr.Invalid, "invalid-field", "choose one of the tenants listed, not %q", f.Tenant)
	}
	return s.provision.CreateChannel(ctx, provision.ChannelSpec{
		TenantSlug: f.Tenant, Kind: f.Kind, Target: f.Target, Name: f.Name,
		Secret: strings.TrimSpace(c.FormValue("secret")), Actor: u.Actor(),
	}, s.cfg.Delivery.Egress)
}

func (s *Server) renderNewChannel(c echo.Context, status int, f web.ChannelForm) error {
	u := currentUser(c)
	tenants, err := s.auth.Tenants(c.Request().Context(), u.Scope())
	if err != nil {
		return err
	}
	f.Tenants, f.Global = tenants, u.TenantID == nil
	return render(c, status, web.AdminNewChannel(page(c, "New channel", web.SectionChannels), f))
}

// adminChannel shows a channel and what it was sent lately; an admin edits,
// tests and deletes it there. ?saved=1 adds the notice a save redirects
// with.
func (s *Server) adminChannel(c echo.Context) error {
	ch, err := s.channelOfRequest(c)
	if err != nil {
		return err
	}
	v := web.ChannelView{Channel: ch, Form: web.ChannelForm{ID: ch.ID, Name: ch.Name, Target: ch.Target}, Saved: c.QueryParam("saved") == "1"}
	return s.renderChannel(c, http.StatusOK, v)
}

// adminSaveChannel saves an edited channel; a problem is explained on the
// form.
func (s *Server) adminSaveChannel(c echo.Context) error {
	ch, err := s.channelOfRequest(c)
	if err != nil {
		return err
	}
	by, err := provision.ByUser(currentUser(c))
	if err != nil {
		return err
	}
	f := channelForm(c)
	f.ID = ch.ID
	err = s.provision.UpdateChannel(c.Request().Context(), by, ch.ID, provision.ChannelChange{Name: f.Name, Target: f.Target}, s.cfg.Delivery.Egress)
	if problem, ok := formProblem(err); ok {
		f.Problem = problem
		return s.renderChannel(c, statusOfError(err), web.ChannelView{Channel: ch, Form: f})
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, adminpath.Path(adminpath.Channel, ch.ID)+"?saved=1")
}

// adminTestChannel sends a test notification at once and shows what the
// channel answered on its page.
func (s *Server) adminTestChannel(c echo.Context) error {
	ch, err := s.channelOfRequest(c)
	if err != nil {
		return err
	}
	u := currentUser(c)
	answer, err := s.notify.Test(c.Request().Context(), u.Scope(), ch.ID, u.Email)
	if err != nil {
		return err
	}
	v := web.ChannelView{Channel: ch, Form: web.ChannelForm{ID: ch.ID, Name: ch.Name, Target: ch.Target}, Tested: &answer}
	return s.renderChannel(c, http.StatusOK, v)
}

// adminDeleteChannel deletes a channel and returns to the list.
func (s *Server) adminDeleteChannel(c echo.Context) error {
	id, err := idParam(c, "channel")
	if err != nil {
		return err
	}
	by, err := provision.ByUser(currentUser(c))
	if err != nil {
		return err
	}
	if err := s.provision.DeleteChannel(c.Request().Context(), by, id); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, fmt.Sprintf("%s?deleted=%d", adminpath.Path(adminpath.Channels), id))
}

// channelOfRequest loads the channel of the request's :id within the
// user's scope.
func (s *Server) channelOfRequest(c echo.Context) (provision.Channel, error) {
	id, err := idParam(c, "channel")
	if err != nil {
		return provision.Channel{}, err
	}
	return s.provision.Channel(c.Request().Context(), currentUser(c).Scope(), id)
}

// renderChannel shows a channel's page with its latest notifications.
func (s *Server) renderChannel(c echo.Context, status int, v web.ChannelView) error {
	sent, err := s.notify.Recent(c.Request().Context(), currentUser(c).Scope(), v.Channel.ID)
	if err != nil {
		return err
	}
	v.Sent = sent
	return render(c, status, web.AdminChannel(page(c, "Channel "+v.Channel.Name, web.SectionChannels), v))
}

// channelForm reads the fields the create and edit forms share.
func channelForm(c echo.Context) web.ChannelForm {
	return web.ChannelForm{Name: strings.TrimSpace(c.FormValue("name")), Target: strings.TrimSpace(c.FormValue("target"))}
}
