// Package adminlist is what the admin lists (audit log, messages, review
// queue, deliveries) share: a filter kept in the URL's query (Param, Read,
// URL), the tenant, environment and message type names it carries turned
// into ids within the user's scope (Resolve), its time range, and keyset
// pagination newest first on (time, id) (Cursor, Page, ParseBounds).
package adminlist
