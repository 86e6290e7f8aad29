-- name: TenantInsert :one
INSERT INTO tenants (slug, name) VALUES (@slug, @name) RETURNING *;

-- name: TenantGetBySlug :one
SELECT * FROM tenants WHERE slug = @slug;
