package db

import (
	"database/sql/driver"
	"encoding/json"
)

// KeyFields is message_types.duplicate_key_fields: the ordered gjson paths
// that read a message's business key. It is stored as a JSON array, which
// the driver decodes into it and encodes from it, so that no caller handles
// the JSON form.
type KeyFields []string

// Value encodes the paths as a JSON array. The driver asks it even of a nil
// slice, which it would otherwise store as NULL: no paths are [].
func (f KeyFields) Value() (driver.Value, error) {
	if f == nil {
		return "[]", nil
	}
	raw, err := json.Marshal([]string(f))
	return string(raw), err
}
