package alert

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lefia/edihub/internal/db"
)

// WithBrokenRule adds, before the others, a rule whose statement fails and
// so aborts the round's transaction but for its savepoint.
func WithBrokenRule() Option {
	return func(e *Evaluator) {
		e.rules = append([]rule{{"broken.rule", func(ctx context.Context, q *db.Queries, _ time.Time) ([]Finding, error) {
			return nil, q.AlertUpdateFinding(ctx, db.AlertUpdateFindingParams{ID: 1, Title: "", Details: []byte("not json")})
		}}}, e.rules...)
	}
}

// OpenTx opens an alert of rule for f in tx as a round does, without the
// round's lock, so that a test can race two transactions on the index.
func (e *Evaluator) OpenTx(ctx context.Context, tx pgx.Tx, rule string, f Finding) (bool, error) {
	details, err := json.Marshal(f.Details)
	if err != nil {
		return false, err
	}
	return e.open(ctx, tx, rule, f, details, e.now())
}
