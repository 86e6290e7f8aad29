// Package openapi holds the OpenAPI 3.1 document of edihub's ingest API. It
// is embedded so the server can serve it and tests can check every real
// answer against it, which keeps document and code from drifting apart.
package openapi

import _ "embed"

// Document is the OpenAPI document in YAML.
//
//go:embed openapi.yaml
var Document []byte
