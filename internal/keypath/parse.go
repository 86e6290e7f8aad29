package keypath

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// Path is a key path the grammar accepts, with what its evaluation may cost.
type Path struct {
	text string
	// chains are the chains of the leading multipath, none when the path
	// has none, and rest is what follows its "|".
	chains []string
	rest   string
	// cost is Cost's value; see there.
	cost int
}

// String returns the path as written.
func (p Path) String() string { return p.text }

// Cost bounds the work of evaluating the path, in reads of the payload: a
// chain reads its input once, plus twice more for each fan-out and each
// query, which evaluate the rest of the path (or the query's own path) on
// every element again and build a result per element, costlier than a plain
// read (see docs/performance.md, "Key paths"). A multipath of k chains
// costs the sum of its chains and multiplies the input of every later stage
// by k, since its output is at most k copies of the payload; @flatten reads
// its input once. The fuzz target and the benchmark check that evaluation
// stays within it.
func (p Path) Cost() int { return p.cost }

// Amplification bounds the size of every stage's input relative to the
// payload: the number of chains of the leading multipath, or 1.
func (p Path) Amplification() int { return max(len(p.chains), 1) }

// Error says which rule a refused path breaks and where.
type Error struct {
	Pos    int    // 1-based byte position in the path
	Rule   string // the rule's name, as README.md's "Key paths" lists them
	Detail string
}

func (e *Error) Error() string {
	return fmt.Sprintf("at position %d, %s (rule %q)", e.Pos, e.Detail, e.Rule)
}

// The rules named in errors.
const (
	ruleSyntax     = "syntax"
	ruleLength     = "length"
	ruleStages     = "stages"
	ruleMultipath  = "multipath"
	ruleModifiers  = "modifiers"
	ruleWildcards  = "wildcards"
	ruleFanOut     = "fan-out"
	ruleQueries    = "queries"
	rulePatterns   = "patterns"
	ruleCost       = "cost"
	ruleEscapes    = "escapes"
	ruleTypeBudget = "type cost"
)

// context is where a chain is being read; it decides which characters end
// a key.
type context int

const (
	inStage     context = iota // a stage: ends at '|' or the end
	inMultipath                // a chain of the multipath: ends at ',' or ']'
	inQuery                    // the chain of a query: ends at an operator or ')'
)

// parser reads one path, counting what the limits bound.
type parser struct {
	s                              string
	i                              int
	chains                         []string
	rest                           string
	wildcardKeys, fanOuts, queries int
	nesting                        int
}

// Parse checks text against the grammar and its limits. A refused path
// gets an *Error naming the first rule it breaks and the position.
func Parse(text string) (Path, error) {
	if len(text) > MaxLength {
		return Path{}, &Error{Pos: MaxLength + 1, Rule: ruleLength,
			Detail: fmt.Sprintf("the path is longer than %d characters", MaxLength)}
	}
	p := &parser{s: text}
	cost, err := p.path()
	if err != nil {
		return Path{}, err
	}
	if cost > MaxCost {
		return Path{}, &Error{Pos: 1, Rule: ruleCost, Detail: fmt.Sprintf(
			"the path would read the payload %d times; at most %d are allowed (fewer multipath chains, fan-outs or queries)",
			cost, MaxCost)}
	}
	return Path{text: text, chains: p.chains, rest: p.rest, cost: cost}, nil
}

// CheckTypeCost checks the paths of one message type together: every
// message is evaluated against all of them.
func CheckTypeCost(paths []Path) error {
	total := 0
	for _, p := range paths {
		total += p.cost
	}
	if total > MaxTypeCost {
		return &Error{Pos: 1, Rule: ruleTypeBudget, Detail: fmt.Sprintf(
			"the paths together would read each payload %d times; at most %d are allowed (use fewer or simpler paths)",
			total, MaxTypeCost)}
	}
	return nil
}

func (p *parser) fail(rule, format string, args ...any) error {
	return &Error{Pos: p.i + 1, Rule: rule, Detail: fmt.Sprintf(format, args...)}
}

func (p *parser) end() bool { return p.i >= len(p.s) }

func (p *parser) peek() byte {
	if p.end() {
		return 0
	}
	return p.s[p.i]
}

// path = [ multipath "|" ] stage { "|" stage }
func (p *parser) path() (int, error) {
	if p.s == "" {
		return 0, p.fail(ruleSyntax, "the path is empty")
	}
	cost, stages := 0, 0
	if p.peek() == '[' {
		c, err := p.multipathStage()
		if err != nil {
			return 0, err
		}
		cost, stages = c, 1
		if p.end() {
			return cost, nil
		}
		if p.peek() != '|' {
			return 0, p.fail(ruleSyntax, "write '|' after the multipath's ']'")
		}
		p.i++
		p.rest = p.s[p.i:]
	}
	amplification := max(len(p.chains), 1)
	for {
		stages++
		if stages > MaxStages {
			return 0, p.fail(ruleStages, "a path may have at most %d stages separated by '|'", MaxStages)
		}
		c, err := p.stage()
		if err != nil {
			return 0, err
		}
		cost += amplification * c
		if p.end() {
			return cost, nil
		}
		// stage stops only at '|' or the end.
		p.i++
		if p.end() {
			return 0, p.fail(ruleSyntax, "the path ends with '|', so its last stage is empty")
		}
	}
}

// multipathStage = "[" chain { "," chain } "]"
func (p *parser) multipathStage() (int, error) {
	p.i++ // '['
	cost := 0
	for {
		if len(p.chains) == MaxMultipath {
			return 0, p.fail(ruleMultipath, "a multipath may hold at most %d paths", MaxMultipath)
		}
		start := p.i
		c, err := p.chain(inMultipath)
		if err != nil {
			return 0, err
		}
		p.chains = append(p.chains, p.s[start:p.i])
		cost += c
		switch p.peek() {
		case ',':
			p.i++
		case ']':
			p.i++
			return cost, nil
		default:
			return 0, p.fail(ruleSyntax, "the '[' at position 1 is not closed")
		}
	}
}

// stage = chain | "@flatten"
func (p *parser) stage() (int, error) {
	if name, ok := p.modifierAt(); ok {
		if !allowedModifiers[name] {
			return 0, p.fail(ruleModifiers, "@%s is not allowed: a key path may use only @flatten", name)
		}
		p.i += 1 + len(name)
		if !p.end() && p.peek() != '|' {
			return 0, p.fail(ruleModifiers, "@%s takes no arguments and is a stage of its own: write '|' after it", name)
		}
		return 1, nil
	}
	switch p.peek() {
	case '[', '{':
		return 0, p.fail(ruleMultipath, "a multipath '[…]' may only start the path")
	}
	return p.chain(inStage)
}

// modifierAt reports whether a gjson modifier starts at the current
// position. gjson takes "@name" for a modifier only when name is one; any
// other "@SEGMENT" is a key, as IDoc converters write attributes.
func (p *parser) modifierAt() (string, bool) {
	if p.peek() != '@' {
		return "", false
	}
	// A name is read conservatively, up to the first character that
	// cannot be part of one, so that "@this]" inside a multipath counts.
	j := p.i + 1
	for j < len(p.s) && isNameChar(p.s[j]) {
		j++
	}
	name := p.s[p.i+1 : j]
	return name, gjson.ModifierExists(name, nil)
}

func isNameChar(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// perElementCost is what a fan-out or a query adds to its chain's cost.
const perElementCost = 2

// chain = step { "." step }. Its cost is one read plus perElementCost per
// fan-out and per query inside it.
func (p *parser) chain(ctx context) (int, error) {
	fanOuts, queries := p.fanOuts, p.queries
	for {
		if err := p.step(ctx); err != nil {
			return 0, err
		}
		if p.peek() != '.' {
			break
		}
		p.i++
		if p.end() || p.stepEnds(ctx) {
			return 0, p.fail(ruleSyntax, "a '.' must be followed by a step")
		}
	}
	if !p.end() && !p.stepEnds(ctx) {
		return 0, p.fail(ruleSyntax, "unexpected %q (write \\%c for the character itself)", p.peek(), p.peek())
	}
	return 1 + perElementCost*(p.fanOuts-fanOuts+p.queries-queries), nil
}

// stepEnds reports whether the current character ends a step in ctx.
func (p *parser) stepEnds(ctx context) bool {
	c := p.peek()
	switch ctx {
	case inMultipath:
		return c == ',' || c == ']'
	case inQuery:
		return c == ')' || c == ' ' || strings.IndexByte("!=<>%", c) >= 0
	default:
		return c == '|'
	}
}

// step = key | "#" | query
func (p *parser) step(ctx context) error {
	if name, ok := p.modifierAt(); ok {
		if !allowedModifiers[name] {
			return p.fail(ruleModifiers, "@%s is not allowed: a key path may use only @flatten", name)
		}
		return p.fail(ruleModifiers, "a modifier must be a stage of its own, after '|'")
	}
	if p.peek() != '#' {
		return p.key(ctx)
	}
	p.i++
	switch {
	case p.peek() == '(':
		return p.query()
	case p.peek() == '.':
		return p.fanOut()
	case p.end() || p.stepEnds(ctx):
		return nil // the array's length
	default:
		return p.fail(ruleSyntax, "'#' must be followed by '.', '(' or end the path (write \\# for the character itself)")
	}
}

func (p *parser) fanOut() error {
	p.fanOuts++
	if p.fanOuts > MaxFanOuts {
		return p.fail(ruleFanOut, "a path may fan out ('#.' or '#(…)#') at most %d times", MaxFanOuts)
	}
	return nil
}

// key reads literal text with wildcards and escapes up to the next '.' or
// the end of the step in ctx.
func (p *parser) key(ctx context) error {
	start, stars, wild := p.i, 0, false
	for !p.end() && p.peek() != '.' && !p.stepEnds(ctx) {
		c := p.peek()
		switch {
		case c == '\\':
			p.i++
			if p.end() {
				return p.fail(ruleEscapes, "a '\\' must be followed by the character it escapes")
			}
		case c < ' ' || c == 0x7f:
			return p.fail(ruleSyntax, "control characters are not allowed")
		case c == '*':
			stars++
			wild = true
			if stars > 1 {
				return p.fail(ruleWildcards, "a key may hold at most one '*'")
			}
		case c == '?':
			wild = true
		case strings.IndexByte(`[]{}()",#|`, c) >= 0 || (ctx == inMultipath && c == ':'):
			return p.fail(ruleEscapes, "%q must be escaped in a key: write \\%c", c, c)
		case c == '!' && p.i == start:
			return p.fail(ruleEscapes, "a key may not start with '!': write \\!")
		}
		p.i++
	}
	if p.i == start {
		return p.fail(ruleSyntax, "a step is empty")
	}
	if wild {
		p.wildcardKeys++
		if p.wildcardKeys > MaxWildcardKeys {
			return &Error{Pos: start + 1, Rule: ruleWildcards,
				Detail: fmt.Sprintf("a path may hold at most %d keys with '*' or '?'", MaxWildcardKeys)}
		}
	}
	return nil
}

// query = "#(" [ chain ] [ op value ] ")" [ "#" ], the '#' already read.
func (p *parser) query() error {
	open := p.i
	p.i++ // '('
	p.queries++
	if p.queries > MaxQueries {
		return &Error{Pos: open, Rule: ruleQueries, Detail: fmt.Sprintf("a path may hold at most %d queries", MaxQueries)}
	}
	p.nesting++
	defer func() { p.nesting-- }()
	if p.nesting > MaxQueryNesting {
		return &Error{Pos: open, Rule: ruleQueries,
			Detail: fmt.Sprintf("a query may hold at most %d level of queries", MaxQueryNesting-1)}
	}
	p.spaces()
	hasPath := false
	if c := p.peek(); c != ')' && strings.IndexByte("!=<>%", c) < 0 {
		if _, err := p.chain(inQuery); err != nil {
			return err
		}
		hasPath = true
	}
	p.spaces()
	if op := p.operator(); op != "" {
		p.spaces()
		if err := p.value(op); err != nil {
			return err
		}
		p.spaces()
	} else if !hasPath {
		return p.fail(ruleQueries, "a query needs a path, a comparison, or both")
	}
	if p.peek() != ')' {
		if p.end() {
			return &Error{Pos: open + 1, Rule: ruleSyntax, Detail: "the '(' is not closed"}
		}
		return p.fail(ruleQueries, "expected ')' to close the query")
	}
	p.i++
	if p.peek() == '#' {
		p.i++
		return p.fanOut()
	}
	return nil
}

func (p *parser) spaces() {
	for p.peek() == ' ' {
		p.i++
	}
}

// operators in the order they are tried: a two-character one first.
var operators = []string{"==", "!=", "<=", ">=", "!%", "<", ">", "%"}

func (p *parser) operator() string {
	for _, op := range operators {
		if strings.HasPrefix(p.s[p.i:], op) {
			p.i += len(op)
			return op
		}
	}
	return ""
}

// value = JSON string | number | true | false | null. A pattern of '%' or
// '!%' holds at most one '*': gjson matches patterns by backtracking, and
// each further '*' multiplies the work by the length of the value tested.
func (p *parser) value(op string) error {
	start := p.i
	if p.peek() == '"' {
		p.i++
		stars := 0
		for !p.end() && p.peek() != '"' {
			switch p.peek() {
			case '\\':
				p.i++
			case '*':
				stars++
			}
			p.i++
		}
		if p.end() {
			return &Error{Pos: start + 1, Rule: ruleSyntax, Detail: "the quote is not closed"}
		}
		p.i++
		if !gjson.Valid(p.s[start:p.i]) {
			return &Error{Pos: start + 1, Rule: ruleSyntax, Detail: "the value is not a valid JSON string"}
		}
		if (op == "%" || op == "!%") && stars > 1 {
			return &Error{Pos: start + 1, Rule: rulePatterns, Detail: "a '%' pattern may hold at most one '*'"}
		}
		return nil
	}
	for !p.end() && p.peek() != ')' && p.peek() != ' ' {
		p.i++
	}
	lit := p.s[start:p.i]
	if r := gjson.Parse(lit); lit == "" || !gjson.Valid(lit) || (r.Type != gjson.Number && r.Type != gjson.True &&
		r.Type != gjson.False && r.Type != gjson.Null) {
		return &Error{Pos: start + 1, Rule: ruleQueries,
			Detail: "a query compares with a JSON string, a number, true, false or null"}
	}
	if op == "%" || op == "!%" {
		return &Error{Pos: start + 1, Rule: rulePatterns, Detail: "a '%' pattern must be a JSON string"}
	}
	return nil
}
