// Package keypath decides which key paths a message type may use and
// evaluates them at a cost bounded by construction.
//
// A key path is a gjson path (duplicate_key_fields), but only a subset of
// gjson's syntax is accepted: the subset whose evaluation reads the payload a
// small, known number of times and never yields more than a small multiple of
// the payload. gjson's multipaths chained with pipes multiply their output at
// every stage, and modifiers such as @pretty rewrite the whole document, so a
// path of a few hundred characters could otherwise take the server's memory
// or minutes of CPU. The grammar (README.md, "Key paths") is:
//
//	path      = [ multipath "|" ] stage { "|" stage }
//	multipath = "[" chain { "," chain } "]"          at most MaxMultipath chains
//	stage     = chain | "@flatten"
//	chain     = step { "." step }
//	step      = key | "#" | query
//	query     = "#(" [ chain ] [ op value ] ")" [ "#" ]
//	op        = "==" | "!=" | "<" | "<=" | ">" | ">=" | "%" | "!%"
//	value     = JSON string | number | true | false | null
//
// A key is literal text with '*' and '?' wildcards (at most one '*' per key)
// and backslash escapes for the characters the grammar uses; "#" is an
// array's length as the last step, or fans out over its elements when
// another step follows ("items.#.sku"). Parse checks a path against the
// grammar and its limits and names the rule and the position of the first
// violation; Path.Get evaluates an accepted path and bounds what it yields.
package keypath

// The limits of the grammar. Each is far above what a business key needs
// (the presets use one multipath of one chain, one modifier and one query)
// and small enough that the product of all of them stays a small multiple of
// one read of the payload; Cost states that product for one path.
const (
	// MaxLength is the longest path accepted, in bytes.
	MaxLength = 512
	// MaxStages bounds the stages separated by '|', the multipath included.
	MaxStages = 4
	// MaxMultipath bounds the chains of the one leading multipath: its
	// output is at most that many copies of the payload.
	MaxMultipath = 4
	// MaxWildcardKeys bounds the keys holding '*' or '?'.
	MaxWildcardKeys = 4
	// MaxFanOuts bounds "#." and "#(…)#", each of which builds an array of
	// the elements it selects.
	MaxFanOuts = 3
	// MaxQueries bounds the queries "#(…)" of one path, and
	// MaxQueryNesting how deeply one query may hold another.
	MaxQueries      = 4
	MaxQueryNesting = 2
	// MaxCost bounds Cost of one path; MaxTypeCost bounds the sum over the
	// paths of one message type, which are all evaluated for every message.
	MaxCost     = 8
	MaxTypeCost = 16
)

// The limits applied when a path is evaluated, on what it yields.
const (
	// MaxValueBytes bounds the JSON text of one extracted value. A business
	// key is a few fields; a path selecting more selects the wrong thing,
	// and the value is also shown on the message page and in the preview.
	MaxValueBytes = 64 << 10
	// MaxElements bounds the elements of an array one path yields, from a
	// fan-out, a multipath, @flatten or an array in the payload.
	MaxElements = 1000
)

// allowedModifiers are the gjson modifiers a key path may use. @flatten
// reads an IDoc segment alike whether the converter made it an object or
// an array of objects, and its output is never larger than its input.
var allowedModifiers = map[string]bool{"flatten": true}
