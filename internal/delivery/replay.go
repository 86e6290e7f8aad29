package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/lefia/edihub/internal/apperr"
	"github.com/lefia/edihub/internal/auth"
)

// replayArgs is a bulk replay's job: every failed delivery that matches
// Match, within the scope of the admin who asked, gets a new round of
// attempts. A replay of thousands runs in a worker, not in the admin's
// request, and survives a restart of either.
type replayArgs struct {
	// ScopeTenantID is the admin's scope: nil for every tenant.
	ScopeTenantID *int64 `json:"scope_tenant_id"`
	Actor         string `json:"actor"`
	Match         Match  `json:"match"`
}

// Kind implements river.JobArgs.
func (replayArgs) Kind() string { return "delivery_replay" }

func (a replayArgs) scope() auth.Scope {
	if a.ScopeTenantID == nil {
		return auth.GlobalScope()
	}
	return auth.TenantScope(*a.ScopeTenantID)
}

// replayOutput is what a finished replay records on its job.
type replayOutput struct {
	Queued int `json:"queued"`
}

// replayWorker runs bulk replays.
type replayWorker struct {
	river.WorkerDefaults[replayArgs]
	service *Service
}

// Work queues the replay's deliveries and records how many.
func (w *replayWorker) Work(ctx context.Context, job *river.Job[replayArgs]) error {
	n, err := w.service.Retry(ctx, job.Args.Actor, job.Args.scope(), job.Args.Match)
	if err != nil {
		// Batches queued before the error stay queued; the next attempt
		// carries on with the failed deliveries left.
		return err
	}
	return river.RecordOutput(ctx, replayOutput{Queued: n})
}

// StartReplay queues a bulk replay of the failed deliveries that match m,
// within the scope of user, and returns its id, which Replay reports on.
func (s *Service) StartReplay(ctx context.Context, user auth.User, m Match) (int64, error) {
	res, err := s.river.Insert(ctx, replayArgs{ScopeTenantID: user.Scope().TenantFilter(), Actor: user.Actor(), Match: m},
		&river.InsertOpts{MaxAttempts: 5})
	if err != nil {
		return 0, fmt.Errorf("queue replay: %w", err)
	}
	return res.Job.ID, nil
}

// ReplayState is how far a bulk replay has got.
type ReplayState struct {
	ID int64
	// Done is true once it has queued every delivery it matched; Queued
	// says how many that was.
	Done   bool
	Queued int
	// Failed is true when it gave up; deliveries queued before stay queued.
	Failed bool
}

// Replay reports on the bulk replay with id, started within scope; one
// started in another scope is not found. A finished replay is reported on
// for a day, as long as River keeps its job.
func (s *Service) Replay(ctx context.Context, scope auth.Scope, id int64) (ReplayState, error) {
	notFound := apperr.New(apperr.NotFound, "not-found", "replay %d does not exist or finished more than a day ago", id)
	job, err := s.river.JobGet(ctx, id)
	if errors.Is(err, river.ErrNotFound) {
		return ReplayState{}, notFound
	}
	if err != nil {
		return ReplayState{}, fmt.Errorf("load replay %d: %w", id, err)
	}
	var args replayArgs
	if job.Kind != (replayArgs{}).Kind() || json.Unmarshal(job.EncodedArgs, &args) != nil || args.scope() != scope {
		return ReplayState{}, notFound
	}
	state := ReplayState{ID: id}
	switch job.State {
	case rivertype.JobStateCompleted:
		var out replayOutput
		if err := json.Unmarshal(job.Output(), &out); err != nil {
			return ReplayState{}, fmt.Errorf("read the result of replay %d: %w", id, err)
		}
		state.Done, state.Queued = true, out.Queued
	case rivertype.JobStateDiscarded, rivertype.JobStateCancelled:
		state.Failed = true
	}
	return state, nil
}
