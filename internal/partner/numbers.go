package partner

import (
	"fmt"
	"strconv"
	"strings"
)

// GapsShown is how many of a partner's missing numbers, the lowest, the
// partners page and the interchange.gap alert list; they count the rest.
const GapsShown = 20

// Numbers writes the missing numbers first, in ascending order, of total
// missing ones, with runs as ranges: "3, 5–7, 9 and 12 more".
func Numbers(first []int64, total int64) string {
	var parts []string
	for i := 0; i < len(first); {
		j := i
		for j+1 < len(first) && first[j+1] == first[j]+1 {
			j++
		}
		part := strconv.FormatInt(first[i], 10)
		if j > i {
			part += "–" + strconv.FormatInt(first[j], 10)
		}
		parts = append(parts, part)
		i = j + 1
	}
	s := strings.Join(parts, ", ")
	if more := total - int64(len(first)); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}
