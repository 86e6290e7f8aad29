package db

// MessageType is the row's message type, false for the one row of a tenant
// that has none. The query selects only what ingest reads of a type.
func (r APIKeyGetWithMessageTypesRow) MessageType() (MessageType, bool) {
	if r.MessageTypeID == nil {
		return MessageType{}, false
	}
	return MessageType{
		ID: *r.MessageTypeID, TenantID: r.TenantID, Code: *r.MessageTypeCode,
		DuplicateKeyFields: r.DuplicateKeyFields, DuplicateWindowHours: r.DuplicateWindowHours,
	}, true
}

// OrEmpty is the value of a nullable text column, "" for NULL, as the
// pages and the editor show a missing docnum or email.
func OrEmpty(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
