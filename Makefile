# edihub developer commands. `make help` lists them.

SHELL := /usr/bin/env bash
export PATH := $(PATH):/usr/local/go/bin

# Code generators are pinned in tools/go.mod so every machine generates the
# same code. sqlc builds without cgo through its WebAssembly parser.
SQLC  := CGO_ENABLED=0 go tool -modfile=tools/go.mod sqlc
TEMPL := go tool -modfile=tools/go.mod templ
OAPI  := go tool -modfile=tools/go.mod oapi-codegen

FUZZTIME ?= 10s

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-z/-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

.PHONY: run
run: ## start edihub with a database and the demo loaded (see README)
	@scripts/run.sh

.PHONY: run-ha
run-ha: ## start edihub and its demo on a local high-availability formation under .data/ha (pg_auto_failover, three nodes)
	@scripts/run-ha.sh

.PHONY: build
build: ## build bin/edihub
	go build -o bin/edihub ./cmd/edihub

.PHONY: test
test: ## run every test against PostgreSQL (TEST_DATABASE_URL), with the race detector, and count them; PKG=./internal/ingest runs one package, SKIP=TestBrowser leaves out the browser tests
	@scripts/test-setup.sh
	@PKG="$(PKG)" SKIP="$(SKIP)" scripts/test.sh

.PHONY: test-ha
test-ha: ## the high-availability formation test alone (pg_auto_failover; a few minutes)
	@scripts/test-setup.sh
	go test -race -count=1 -run TestFormationKeepsEveryAcknowledgedMessage -v ./internal/server

.PHONY: fuzz
fuzz: ## run each fuzz target for FUZZTIME (default 10s; a count such as 50000x also works)
	@scripts/fuzz.sh $(FUZZTIME)

.PHONY: bench
bench: ## measure ingest against the floor and pgbench on a PostgreSQL cluster of its own, and the fingerprint and content hash (docs/performance.md)
	@scripts/bench.sh

.PHONY: bench/admin
bench/admin: ## time every admin page at 10M messages and 5M audit events, filled once in SQL and reused (docs/performance.md)
	@scripts/bench-admin.sh

.PHONY: bench/admin-dense
bench/admin-dense: ## the same with dense recent traffic: 10M messages, 1M of them in the last 7 days (docs/performance.md)
	@BENCH_ADMIN_DB=edihub_bench_admin_dense BENCH_ADMIN_RECENT=$${BENCH_ADMIN_RECENT:-1000000} BENCH_ADMIN_OUT=bin/bench-admin-dense scripts/bench-admin.sh

.PHONY: bench/expiry
bench/expiry: ## ingest p99 at a fixed rate with and without the sweeper deleting a million expired messages (docs/operations.md)
	@scripts/bench-expiry.sh

.PHONY: sizing
sizing: ## bytes per message, audit event, blocked copy, delivery and attempt, measured in a fresh database (docs/operations.md)
	@scripts/sizing.sh

.PHONY: profile
profile: ## CPU and allocation profiles of the server and PostgreSQL's statement statistics per traffic mix (docs/performance.md)
	@scripts/profile.sh

.PHONY: profile/system
profile/system: ## CPU per message of every process and of PostgreSQL's parts, by perf, beside pgbench's insert (docs/performance.md)
	@scripts/profile-system.sh

.PHONY: profile/postgres
profile/postgres: ## PostgreSQL's CPU per batch message under edihub beside under the batch floor, function by function, by perf (docs/performance.md)
	@scripts/profile-postgres.sh

.PHONY: bench/go
bench/go: ## run every Go benchmark with allocation counts
	go test -run '^$$' -bench . -benchmem ./...

.PHONY: generate
generate: generate/sqlc generate/templ generate/openapi ## regenerate sqlc, templ and OpenAPI client output

.PHONY: generate/sqlc
generate/sqlc:
	$(SQLC) generate

.PHONY: generate/templ
generate/templ:
	$(TEMPL) generate -path web

# The Go client that integrators would generate from the served document;
# its test drives a running edihub through it.
.PHONY: generate/openapi
generate/openapi:
	$(OAPI) -config internal/openapi/client/oapi-codegen.yaml internal/openapi/openapi.yaml

# The linter is pinned in a module of its own: its dependencies must not
# move the code generators'.
LINT := go tool -modfile=tools/lint/go.mod golangci-lint

.PHONY: lint
lint: ## run golangci-lint: the standard checks and the house rules of .golangci.yaml
	$(LINT) run ./...

.PHONY: lint/openapi
lint/openapi: ## lint the OpenAPI document with Redocly's linter (needs npm); libopenapi checks it in go test
	npx --yes @redocly/cli@2.77.0 lint --config internal/openapi/redocly.yaml internal/openapi/openapi.yaml

.PHONY: verify
verify: generate ## regenerate, then fail on any diff, unformatted code or vet finding
	git diff --exit-code -- internal/db web internal/openapi/client
	@test -z "$$(git status --porcelain -- internal/db web internal/openapi/client)" || { git status --porcelain -- internal/db web internal/openapi/client; echo "generated files are not committed"; exit 1; }
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "run gofmt -w"; exit 1; }
	go vet ./...
	go mod tidy -diff

.PHONY: vendor
vendor: ## refresh web/static/vendor (Pico CSS, htmx, Redoc) from the versions in package.json; needs npm
	@scripts/vendor.sh

.PHONY: stop-db
stop-db: ## stop the project-local PostgreSQL that `make run` may have started under .data/
	@scripts/stop-db.sh
