-- The sessions table is read and written by the session library
-- (github.com/alexedwards/scs/pgxstore); edihub only removes expired rows.

-- name: SessionDeleteExpired :execrows
DELETE FROM sessions WHERE expiry < now();
