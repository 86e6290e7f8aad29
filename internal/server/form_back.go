package server

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/lefia/edihub/internal/adminpath"
)

// listFilter is an admin list's filter, which rebuilds the list's URL from
// the parameters it knows.
type listFilter interface{ URL() string }

// formBack is where a form posted from a list or an item's page returns
// to: back when it is the list (route list), rebuilt through its filter,
// or an item's page (route item, an id), else the list. Anything else,
// such as another site, is not followed.
func formBack[F listFilter](back, list string, filter func(url.Values) F, item string) string {
	listPath := adminpath.Path(list)
	u, err := url.Parse(back)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil {
		return listPath
	}
	if u.Path == listPath {
		return filter(u.Query()).URL()
	}
	if rest, ok := strings.CutPrefix(u.Path, adminpath.Path(item, "")); ok {
		if id, err := strconv.ParseInt(rest, 10, 64); err == nil && id > 0 {
			return adminpath.Path(item, id)
		}
	}
	return listPath
}
