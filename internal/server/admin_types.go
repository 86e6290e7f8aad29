package server

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/typeeditor"
	"github.com/lefia/edihub/web"
)

// adminMessageTypes lists the message types the signed-in user may see.
func (s *Server) adminMessageTypes(c echo.Context) error {
	types, err := s.types.List(c.Request().Context(), currentUser(c).Scope())
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.AdminMessageTypes(page(c, "Message types", web.SectionMessageTypes), types))
}

// loadType loads the message type the URL names, within the user's scope.
func (s *Server) loadType(c echo.Context) (typeeditor.Type, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return typeeditor.Type{}, apperr.New(apperr.NotFound, "not-found", "there is no message type %q", c.Param("id"))
	}
	return s.types.Get(c.Request().Context(), currentUser(c).Scope(), id)
}

// typeForm reads the editor's posted form; see typeeditor.ParseForm.
func typeForm(c echo.Context) (typeeditor.Form, bool, error) {
	values, err := c.FormParams()
	if err != nil {
		return typeeditor.Form{}, false, apperr.New(apperr.Invalid, "invalid-form", "the form cannot be read")
	}
	f, save := typeeditor.ParseForm(values)
	return f, save, nil
}

// renderTypeEditor shows the editor's whole page.
func renderTypeEditor(c echo.Context, status int, ed typeeditor.Editor) error {
	title := "New message type"
	if ed.Type != nil {
		title = fmt.Sprintf("%s (%s)", ed.Type.Code, ed.Type.Tenant)
	}
	return render(c, status, web.AdminTypeEditor(page(c, title, web.SectionMessageTypes), ed))
}
