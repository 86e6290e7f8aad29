package pgtest

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// recordingTB keeps the errors reported to it instead of failing the test.
type recordingTB struct {
	testing.TB
	errors []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recordingTB) Failed() bool { return len(r.errors) > 0 }

func TestAKeyWithoutItsMessageFailsTheTestThatLeftIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := Pool(t)
	_, err := pool.Exec(ctx, `INSERT INTO message_keys (tenant_id, message_id, value) VALUES (1, 42, '4500012345')`)
	require.NoError(t, err)

	recorder := &recordingTB{TB: t}
	requireKeysHaveTheirMessages(recorder, pool)
	require.Equal(t, []string{"1 message keys name a message of their tenant that is not there"}, recorder.errors)

	_, err = pool.Exec(ctx, `DELETE FROM message_keys`)
	require.NoError(t, err)
	recorder = &recordingTB{TB: t}
	requireKeysHaveTheirMessages(recorder, pool)
	require.Empty(t, recorder.errors)
}
