package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/typeeditor"
	"github.com/lefia/edihub/web"
)

// adminPreviewMessageType answers the editor's htmx requests: the editor's
// fields for the posted form, edited by the button pressed, with the
// preview and the impact of its settings. It never saves. Problems are
// part of the fragment, so the answer is always 200, which htmx swaps.
func (s *Server) adminPreviewMessageType(c echo.Context) error {
	t, err := s.loadType(c)
	if err != nil {
		return err
	}
	return s.renderPreview(c, &t)
}

// adminPreviewNewMessageType is adminPreviewMessageType for a type not
// created yet.
func (s *Server) adminPreviewNewMessageType(c echo.Context) error {
	return s.renderPreview(c, nil)
}

func (s *Server) renderPreview(c echo.Context, t *typeeditor.Type) error {
	f, _, err := typeForm(c)
	if err != nil {
		return err
	}
	ed, err := s.types.Editor(c.Request().Context(), currentUser(c), t, f)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.TypeEditorFields(ed))
}
