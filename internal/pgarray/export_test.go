package pgarray

// SendRoom is the tracer EncodeDirectly gives a pool, for the tests.
var SendRoom = sendRoom{}
