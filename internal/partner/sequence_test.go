package partner_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/db"
	"github.com/lefia/edihub/internal/partner"
	"github.com/lefia/edihub/internal/pgtest"
	"github.com/lefia/edihub/internal/testfactory"
)

type bundle struct {
	pool *pgxpool.Pool
	pair partner.Pair
}

func setup(t *testing.T) bundle {
	t.Helper()
	pool := pgtest.Pool(t)
	tenant, env := testfactory.TenantWithEnvironment(t, pool, "acme")
	return bundle{pool: pool, pair: partner.Pair{TenantID: tenant.ID, EnvironmentID: env.ID, Standard: "x12",
		Sender: "ZZ:ACMEBUYER", Receiver: "ZZ:EDIHUBSELLER"}}
}

// record records control numbers one transaction each, in order.
func (b bundle) record(t *testing.T, numbers ...string) {
	t.Helper()
	for _, n := range numbers {
		require.NoError(t, db.WithTx(context.Background(), b.pool, func(q *db.Queries) error {
			return partner.Record(context.Background(), q, b.pair, n)
		}))
	}
}

func (b bundle) gaps(t *testing.T) []int64 {
	t.Helper()
	return pgtest.Column[int64](t, b.pool, `SELECT control_number FROM interchange_gaps ORDER BY control_number`)
}

type partnerRow struct {
	Last     string
	Highest  *int64
	JumpFrom *int64
	JumpTo   *int64
}

func (b bundle) partner(t *testing.T) partnerRow {
	t.Helper()
	var p partnerRow
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT last_control_number, highest, jump_from, jump_to
		FROM interchange_partners`).Scan(&p.Last, &p.Highest, &p.JumpFrom, &p.JumpTo))
	return p
}

func TestSkippedNumbersAreGapsUntilTheyArrive(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.record(t, "000000001", "000000002")
	require.Empty(t, b.gaps(t))
	b.record(t, "000000006")
	require.Equal(t, []int64{3, 4, 5}, b.gaps(t))
	b.record(t, "000000004")
	require.Equal(t, []int64{3, 5}, b.gaps(t))
	require.Equal(t, "000000004", b.partner(t).Last, "the latest, not the highest")
	require.Equal(t, int64(6), *b.partner(t).Highest)
	b.record(t, "000000002")
	require.Equal(t, []int64{3, 5}, b.gaps(t), "an old number again opens and closes nothing")
	require.Equal(t, int64(6), *b.partner(t).Highest)
}

// A partner restarting at 1 (or wrapping at 999999999) starts a new run:
// its next numbers are not taken for old ones, and the gaps of the old run
// stay open. A 1 after a run that started above it is a late first
// interchange, which changes nothing.
func TestOneStartsANewRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.record(t, "1", "7", "9", "1", "2", "4")
	require.Equal(t, []int64{3, 5, 6, 8}, b.gaps(t), "the old run's, closed by the new run's numbers")
	require.Equal(t, int64(4), *b.partner(t).Highest)

	late := setup(t)
	late.record(t, "7", "9", "1", "2", "4")
	require.Equal(t, []int64{8}, late.gaps(t))
	require.Equal(t, int64(9), *late.partner(t).Highest)
}

// A jump longer than MaxGapsPerJump writes no gaps, only the jump.
func TestAHugeJumpIsNoGaps(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.record(t, "5", fmt.Sprint(5+partner.MaxGapsPerJump+1))
	require.Len(t, b.gaps(t), partner.MaxGapsPerJump, "the longest run listed")
	b.record(t, "1000000000")
	require.Len(t, b.gaps(t), partner.MaxGapsPerJump, "none more")
	p := b.partner(t)
	require.Equal(t, int64(5+partner.MaxGapsPerJump+1), *p.JumpFrom)
	require.Equal(t, int64(1000000000), *p.JumpTo)
	require.Equal(t, int64(1000000000), *p.Highest)
}

// EDIFACT's control numbers may be alphanumeric: they keep no sequence.
func TestAlphanumericControlNumbersKeepNoSequence(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.record(t, "ABC1", "ABC5")
	p := b.partner(t)
	require.Equal(t, "ABC5", p.Last)
	require.Nil(t, p.Highest)
	require.Empty(t, b.gaps(t))
}

// Many simultaneous interchanges of one pair, in any order: every number
// skipped is a gap, no number received is one, whichever came first.
func TestSimultaneousInterchangesLoseNoGapAndInventNone(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.record(t, "1")
	skipped := map[int]bool{17: true, 50: true, 51: true, 99: true}
	var numbers []int
	for n := 2; n <= 120; n++ {
		if !skipped[n] {
			numbers = append(numbers, n)
		}
	}
	rand.Shuffle(len(numbers), func(i, j int) { numbers[i], numbers[j] = numbers[j], numbers[i] })
	var wg sync.WaitGroup
	errs := make(chan error, len(numbers))
	for _, n := range numbers {
		wg.Go(func() {
			errs <- db.WithTx(context.Background(), b.pool, func(q *db.Queries) error {
				return partner.Record(context.Background(), q, b.pair, fmt.Sprintf("%09d", n))
			})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, []int64{17, 50, 51, 99}, b.gaps(t))
	require.Equal(t, 1, pgtest.Count(t, b.pool, `SELECT count(*) FROM interchange_partners`))
	require.Equal(t, int64(120), *b.partner(t).Highest)
}

// The first interchanges of a new pair race to create its row: one does,
// the others wait for it and update it.
func TestSimultaneousFirstInterchangesMakeOnePartner(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var wg sync.WaitGroup
	for n := 1; n <= 20; n++ {
		wg.Go(func() {
			assertNoError(t, db.WithTx(context.Background(), b.pool, func(q *db.Queries) error {
				return partner.Record(context.Background(), q, b.pair, fmt.Sprint(n))
			}))
		})
	}
	wg.Wait()
	require.Equal(t, 1, pgtest.Count(t, b.pool, `SELECT count(*) FROM interchange_partners`))
	require.Equal(t, int64(20), *b.partner(t).Highest)
	// The run starts at whichever came first; every number above it
	// arrived, so none is missing.
	require.Empty(t, b.gaps(t))
}

func assertNoError(t *testing.T, err error) {
	if err != nil {
		t.Error(err)
	}
}

func TestNumbers(t *testing.T) {
	t.Parallel()
	require.Equal(t, "3, 5–7, 9 and 12 more", partner.Numbers([]int64{3, 5, 6, 7, 9}, 17))
	require.Equal(t, "1–2", partner.Numbers([]int64{1, 2}, 2))
	require.Equal(t, "", partner.Numbers(nil, 0))
}
