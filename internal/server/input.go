package server

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/lefia/edihub/internal/apperr"
)

// maxQueryValueLength bounds one URL query value; filters and page links
// need far less.
const maxQueryValueLength = 2048

// plainQuery refuses a request whose URL query holds a value that no text
// column can store and no row can match: a NUL byte or invalid UTF-8
// (PostgreSQL refuses both with an error), or a value longer than
// maxQueryValueLength. Checked once here, before any handler, such input is
// a clear 400 instead of a server error that invites a retry.
func plainQuery(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		for name, values := range c.QueryParams() {
			for _, v := range values {
				if err := checkValue("the address", name, v, maxQueryValueLength); err != nil {
					return err
				}
			}
		}
		return next(c)
	}
}

// plainForm does the same for the fields of a posted admin form, whose
// size the admin pages' body limit bounds; it must run after that limit.
func plainForm(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Request().Method != http.MethodPost {
			return next(c)
		}
		form, err := c.FormParams()
		if err != nil {
			return apperr.New(apperr.Invalid, "invalid-form", "the form could not be read")
		}
		for name, values := range form {
			for _, v := range values {
				if err := checkValue("the form", name, v, len(v)); err != nil {
					return err
				}
			}
		}
		return next(c)
	}
}

func checkValue(where, name, value string, maxLength int) error {
	if !plainName(name) {
		name = "?"
	}
	switch {
	case len(value) > maxLength:
		return apperr.New(apperr.Invalid, "invalid-parameter",
			"the parameter %q in %s is longer than %d bytes", name, where, maxLength)
	case !utf8.ValidString(value):
		return apperr.New(apperr.Invalid, "invalid-parameter",
			"the parameter %q in %s is not valid UTF-8", name, where)
	case strings.IndexByte(value, 0) >= 0:
		return apperr.New(apperr.Invalid, "invalid-parameter",
			"the parameter %q in %s holds a NUL byte, which no text can contain", name, where)
	}
	return nil
}

// plainName reports whether a parameter name is short printable ASCII, fit
// to be repeated in an answer.
func plainName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		if name[i] < 0x21 || name[i] > 0x7e {
			return false
		}
	}
	return true
}
