package server_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/openapi"
)

var (
	apiValidatorOnce sync.Once
	apiValidator     validator.Validator
	apiValidatorErr  error
)

// documented reports whether a path is described by the OpenAPI document;
// every answer on such a path, in every test, is checked against it.
func documented(path string) bool {
	return path == "/api/edi-hub/receive-message" || path == "/api/edi-hub/receive-messages" || strings.HasPrefix(path, "/api/webhook/") ||
		path == "/healthz" || path == "/readyz"
}

// requireMatchesOpenAPI checks a real answer against the OpenAPI document,
// so the document cannot drift from the code.
func requireMatchesOpenAPI(t *testing.T, req *http.Request, resp *http.Response, body []byte) {
	t.Helper()
	if !documented(req.URL.Path) {
		return
	}
	apiValidatorOnce.Do(func() {
		doc, err := libopenapi.NewDocument(openapi.Document)
		if err != nil {
			apiValidatorErr = err
			return
		}
		v, errs := validator.NewValidator(doc)
		if len(errs) > 0 {
			apiValidatorErr = errs[0]
			return
		}
		apiValidator = v
	})
	require.NoError(t, apiValidatorErr, "load the OpenAPI document")
	resp.Body = io.NopCloser(bytes.NewReader(body))
	ok, errs := apiValidator.ValidateHttpResponse(req, resp)
	messages := make([]string, 0, len(errs))
	for _, e := range errs {
		messages = append(messages, e.Error()+": "+e.Reason)
		for _, se := range e.SchemaValidationErrors {
			messages = append(messages, "  "+se.Reason+" at "+se.FieldPath)
		}
	}
	require.True(t, ok, "%s %s answered %d, which the OpenAPI document does not allow:\n%s\nbody: %s",
		req.Method, req.URL.Path, resp.StatusCode, strings.Join(messages, "\n"), body)
}

func TestOpenAPIDocumentIsValidAndServed(t *testing.T) {
	t.Parallel()
	doc, err := libopenapi.NewDocument(openapi.Document)
	require.NoError(t, err)
	v, errs := validator.NewValidator(doc)
	require.Empty(t, errs)
	ok, verrs := v.ValidateDocument()
	require.True(t, ok, "%v", verrs)

	b := setup(t)
	resp := do(t, http.MethodGet, b.url+"/api/openapi.yaml", nil, nil)
	require.Equal(t, http.StatusOK, resp.status)
	require.Equal(t, openapi.Document, resp.body)
	require.Contains(t, resp.header.Get("Content-Type"), "yaml")
}
