package server

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/typeeditor"
)

// adminNewMessageType shows the empty editor of a new message type.
func (s *Server) adminNewMessageType(c echo.Context) error {
	ed, err := s.types.Editor(c.Request().Context(), currentUser(c), nil, typeeditor.NewForm())
	if err != nil {
		return err
	}
	return renderTypeEditor(c, http.StatusOK, ed)
}

// adminCreateMessageType creates the type on the save button and goes to
// its editor; any other button shows the form again as it edited it. A
// problem shows the form again with the problem next to its field.
func (s *Server) adminCreateMessageType(c echo.Context) error {
	ctx := c.Request().Context()
	u := currentUser(c)
	f, save, err := typeForm(c)
	if err != nil {
		return err
	}
	status := http.StatusOK
	var problems typeeditor.Errors
	if save {
		p, errs := f.Creation(u)
		if errs.Empty() {
			id, err := s.types.Create(ctx, u, p)
			if err == nil {
				return c.Redirect(http.StatusSeeOther, savedURL(id, 1))
			}
			if !errors.As(err, &errs) {
				return err
			}
		}
		status, problems = http.StatusBadRequest, errs
	}
	ed, err := s.types.Editor(ctx, u, nil, f)
	if err != nil {
		return err
	}
	if save {
		ed.Errors = problems
	}
	return renderTypeEditor(c, status, ed)
}
