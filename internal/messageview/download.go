package messageview

import (
	"context"
	"errors"
	"fmt"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auth"
	"github.com/lefia/edihub/internal/db"
)

// Part is a part of the bytes a message or a blocked copy was received as,
// read for a download one part at a time.
type Part struct {
	ContentType string
	Size        int64 // of all the bytes
	Bytes       []byte
}

// ReceivedPart reads up to length bytes from offset of what message id was
// received as (its payload, byte for byte, when it came as JSON), within
// scope; a message outside the scope is missing.
func (s *Service) ReceivedPart(ctx context.Context, scope auth.Scope, id, offset int64, length int) (Part, error) {
	row, err := s.q.MessageReceivedPart(ctx, db.MessageReceivedPartParams{
		ID: id, ScopeTenantID: scope.TenantFilter(), PartStart: int32(offset) + 1, PartLength: int32(length),
	})
	if errors.Is(err, db.ErrNotFound) {
		return Part{}, apperr.New(apperr.NotFound, "not-found", "there is no message %d", id)
	}
	if err != nil {
		return Part{}, fmt.Errorf("read message %d from byte %d: %w", id, offset, err)
	}
	return Part{ContentType: row.ContentType, Size: row.Size, Bytes: row.Part}, nil
}
