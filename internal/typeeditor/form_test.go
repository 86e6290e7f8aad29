package typeeditor

import (
	"net/url"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lefia/edihub/internal/auth"
)

func TestParseFormEditsThePaths(t *testing.T) {
	t.Parallel()
	abc := []string{"a", "b", "c"}
	for _, tt := range []struct {
		op    string
		want  []string
		focus int
	}{
		{"", abc, -1},
		{"preview", abc, -1},
		{"add", []string{"a", "b", "c", ""}, 3},
		{"remove:1", []string{"a", "c"}, -1},
		{"remove:3", abc, -1},
		{"remove:-1", abc, -1},
		{"up:2", []string{"a", "c", "b"}, -1},
		{"up:0", abc, -1},
		{"down:0", []string{"b", "a", "c"}, -1},
		{"down:2", abc, -1},
		{"down:x", abc, -1},
		{"preset:cloudevents", []string{"source", "id"}, -1},
		{"preset:nonesuch", abc, -1},
	} {
		v := url.Values{"path": abc, "op": {tt.op}}
		f, save := ParseForm(v)
		require.False(t, save, tt.op)
		require.Equal(t, tt.want, f.Paths, tt.op)
		require.Equal(t, tt.focus, f.Focus, tt.op)
		require.Equal(t, abc, v["path"], "the request's values are left alone")
	}
	f, save := ParseForm(url.Values{"path": abc, "op": {"save"}, "window": {" 48 "}, "version": {"3"}})
	require.True(t, save)
	require.Equal(t, abc, f.Paths)
	require.Equal(t, "48", f.Window)
}

func TestSettings(t *testing.T) {
	t.Parallel()
	p, errs := Form{Paths: []string{"*.IDOC.E1EDK01.BELNR"}, Version: "4"}.Settings()
	require.True(t, errs.Empty(), errs.Error())
	require.Nil(t, p.WindowHours, "empty is the default window")
	require.Equal(t, int32(168), p.Window())
	require.Equal(t, int32(4), p.Version)
	require.Equal(t, DefaultSampleSize, p.SampleSize)

	p, errs = Form{Window: "48", SampleSize: "5000"}.Settings()
	require.True(t, errs.Empty(), errs.Error())
	require.Equal(t, []string{}, p.Paths, "no paths: the docnum")
	require.Equal(t, 48, *p.WindowHours)
	require.Equal(t, MaxSampleSize, p.SampleSize)
	require.Zero(t, p.Version, "no version matches no stored type")

	_, errs = Form{
		Paths:  []string{"ok", "", "ok", `#(QUALF=="009"`},
		Window: "0", SampleSize: "5001",
	}.Settings()
	require.Equal(t, "", errs.PathProblem(0))
	require.Equal(t, "path 2 of duplicate_key_fields is empty", errs.PathProblem(1))
	require.Equal(t, `path "ok" appears twice in duplicate_key_fields`, errs.PathProblem(2))
	require.Contains(t, errs.PathProblem(3), "is refused: at position 2, the '(' is not closed")
	require.Equal(t, "", errs.PathProblem(9))
	require.Empty(t, errs.Paths, "each problem is next to its path")
	require.Equal(t, "duplicate_window_hours must be between 1 and 87600, or unset for the default of 168", errs.Window)
	require.Equal(t, "the impact analysis reads between 1 and 5000 messages", errs.SampleSize)
	require.Len(t, errs.List(), 5)
	require.Contains(t, errs.Error(), "path 2 of duplicate_key_fields is empty; ")

	// The blank path just added is left out until it is typed.
	p, errs = Form{Paths: []string{"a", ""}, Focus: 1}.Settings()
	require.True(t, errs.Empty(), errs.Error())
	require.Equal(t, []string{"a"}, p.Paths)
	_, errs = Form{Paths: []string{"a", ""}, Focus: -1}.Settings()
	require.Equal(t, "path 2 of duplicate_key_fields is empty", errs.PathProblem(1))

	_, errs = Form{Window: "two days"}.Settings()
	require.Contains(t, errs.Window, "a whole number of hours")

	many := make([]string, 33)
	for i := range many {
		many[i] = "p" + strconv.Itoa(i)
	}
	_, errs = Form{Paths: many}.Settings()
	require.Equal(t, []string{"duplicate_key_fields has 33 paths: use at most 32"}, errs.List())
}

func TestCreation(t *testing.T) {
	t.Parallel()
	acme := int64(5)
	global := auth.User{ID: 1, Role: "admin"}
	tenantAdmin := auth.User{ID: 2, Role: "admin", TenantID: &acme, TenantSlug: "acme"}

	p, errs := Form{Code: "ORDERS05", Tenant: "globex"}.Creation(global)
	require.True(t, errs.Empty(), errs.Error())
	require.Equal(t, "globex", p.Tenant)
	require.Equal(t, "ORDERS05", p.Code)

	_, errs = Form{Code: "ORDERS05"}.Creation(global)
	require.Equal(t, "choose the tenant the message type belongs to", errs.Tenant)

	p, errs = Form{Code: "ORDERS05", Tenant: "globex"}.Creation(tenantAdmin)
	require.True(t, errs.Empty(), errs.Error())
	require.Equal(t, "acme", p.Tenant, "a tenant's admin creates in that tenant, whatever the form says")

	_, errs = Form{Code: "ORDERS 05", Window: "x"}.Creation(tenantAdmin)
	require.Contains(t, errs.Code, `message type code "ORDERS 05" is not valid`)
	require.NotEmpty(t, errs.Window)
}

func TestFormFor(t *testing.T) {
	t.Parallel()
	w := int32(48)
	f := FormFor(Type{Paths: []string{"a"}, WindowHours: &w, Version: 3})
	require.Equal(t, Form{Paths: []string{"a"}, Window: "48", Version: "3", Focus: -1}, f)
	require.Equal(t, "", FormFor(Type{Version: 1}).Window, "the default window is shown as empty")
}
