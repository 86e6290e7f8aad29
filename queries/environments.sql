-- name: EnvironmentInsert :one
INSERT INTO environments (tenant_id, slug) VALUES (@tenant_id, @slug) RETURNING *;

-- name: EnvironmentGetBySlug :one
SELECT * FROM environments WHERE tenant_id = @tenant_id AND slug = @slug;
