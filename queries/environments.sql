-- name: EnvironmentInsert :one
INSERT INTO environments (tenant_id, slug) VALUES (@tenant_id, @slug) RETURNING *;

-- name: EnvironmentGetBySlug :one
SELECT * FROM environments WHERE tenant_id = @tenant_id AND slug = @slug;

-- EnvironmentListForAdmin lists the environments a signed-in user may
-- create destinations and API keys in (scope_tenant_id NULL: every
-- tenant's).
-- name: EnvironmentListForAdmin :many
SELECT t.slug AS tenant_slug, e.slug AS environment_slug
FROM environments e
JOIN tenants t ON t.id = e.tenant_id
WHERE sqlc.narg(scope_tenant_id)::bigint IS NULL OR e.tenant_id = sqlc.narg(scope_tenant_id)
ORDER BY t.slug, e.slug;
