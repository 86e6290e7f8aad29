package server

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/adminpath"
	"github.com/lefia/edihub/internal/typeeditor"
)

// adminMessageType shows the editor of a message type, filled with its
// stored settings.
func (s *Server) adminMessageType(c echo.Context) error {
	t, err := s.loadType(c)
	if err != nil {
		return err
	}
	ed, err := s.types.Editor(c.Request().Context(), currentUser(c), &t, typeeditor.FormFor(t))
	if err != nil {
		return err
	}
	// The notice of a save is shown only while the type is at the version
	// saved, so that a crafted link cannot make the page claim anything.
	if c.QueryParam("saved") == strconv.Itoa(int(t.Version)) {
		ed.Saved = t.Version
	}
	return renderTypeEditor(c, http.StatusOK, ed)
}

// adminSaveMessageType saves the form over the version it was opened at
// on the save button; any other button shows the form again as it edited
// it. A stale version is refused: the page then shows the admin's values
// next to the stored ones, and the form carries the stored version, so
// that only a deliberate second save replaces another admin's change.
func (s *Server) adminSaveMessageType(c echo.Context) error {
	t, err := s.loadType(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	u := currentUser(c)
	f, save, err := typeForm(c)
	if err != nil {
		return err
	}
	status, conflict := http.StatusOK, false
	if save {
		// The editor shows the settings' problems next to their fields.
		p, errs := f.Settings()
		if !errs.Empty() {
			status = http.StatusBadRequest
		} else {
			saved, err := s.types.Update(ctx, u, t.ID, p)
			var stale *typeeditor.StaleError
			switch {
			case err == nil:
				return c.Redirect(http.StatusSeeOther, savedURL(saved.ID, saved.Version))
			case errors.As(err, &stale):
				t, status, conflict = stale.Current, http.StatusConflict, true
				f.Version = strconv.Itoa(int(t.Version))
			default:
				return err
			}
		}
	}
	ed, err := s.types.Editor(ctx, u, &t, f)
	if err != nil {
		return err
	}
	ed.Conflict = conflict
	return renderTypeEditor(c, status, ed)
}

// savedURL is the editor of a type just saved as version.
func savedURL(id int64, version int32) string {
	return fmt.Sprintf("%s?saved=%d", adminpath.Path(adminpath.MessageType, id), version)
}
