package server

import (
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/lefia/edihub/internal/adminpath"
	"github.com/lefia/edihub/internal/ingest"
	"github.com/lefia/edihub/web"
)

// routes lists every route of the server in one place.
func (s *Server) routes() {
	e := s.echo
	e.Use(requestIDs)
	e.Use(middleware.Recover())
	e.Use(s.requestLogger())
	e.Use(s.observeLatency)
	e.Use(securityHeaders())

	e.GET("/", s.home)
	e.StaticFS("/static", echo.MustSubFS(web.Static, "static"))
	// Pages name their icon; browsers still ask for this path on answers
	// that are not pages.
	e.FileFS("/favicon.ico", "static/favicon.svg", web.Static)
	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)

	api := e.Group("/api", timeLimit(s.cfg.RequestTimeout), plainQuery, s.bodies.hold)
	api.POST("/edi-hub/receive-message", s.receiveMessage, s.observeIngest(ingest.EndpointReceiveMessage), s.requireSynchronousStandby)
	api.POST("/edi-hub/receive-messages", s.receiveMessages, s.observeIngest(ingest.EndpointReceiveMessages), s.requireSynchronousStandby)
	api.POST("/webhook/:integrationId", s.receiveWebhook, s.observeIngest(ingest.EndpointWebhook), s.requireSynchronousStandby)
	api.GET("/openapi.yaml", s.openAPIDocument)
	api.GET("/docs", s.apiDocs)
	// Any other method on an intake path answers 405 with Allow: POST,
	// rather than the 404 of the group's catch-all, so that a connection
	// test (SAP's SM59 sends a GET) proves that the path reaches edihub.
	for _, path := range []string{"/edi-hub/receive-message", "/edi-hub/receive-messages", "/webhook/:integrationId"} {
		api.Match([]string{http.MethodGet, http.MethodHead, http.MethodPut, http.MethodPatch, http.MethodDelete}, path, postOnly)
	}

	// Pages and redirects link to these routes through adminpath.Path.
	admin := e.Group(adminpath.Prefix, append([]echo.MiddlewareFunc{timeLimit(s.cfg.AdminRequestTimeout), plainQuery}, s.adminPages()...)...)
	admin.GET(adminpath.Login, s.adminLoginForm)
	admin.POST(adminpath.Login, s.adminLogin)
	signedIn := admin.Group("", s.requireUser)
	signedIn.GET(adminpath.Dashboard, s.adminDashboard)
	signedIn.POST(adminpath.Logout, s.adminLogout)
	signedIn.GET(adminpath.Audit, s.adminAudit)
	signedIn.GET(adminpath.Messages, s.adminMessages)
	signedIn.GET(adminpath.Message, s.adminMessage, s.heavy.limit)
	signedIn.GET(adminpath.MessageReceived, receivedDownload("message", s.messages.ReceivedPart))
	signedIn.GET(adminpath.Blocked, s.adminBlocked, s.heavy.limit)
	signedIn.GET(adminpath.BlockedReceived, receivedDownload("blocked copy", s.blocked.ReceivedPart))
	signedIn.POST(adminpath.BlockedRelease, s.adminReleaseBlocked, requireAdmin)
	signedIn.POST(adminpath.BlockedDismiss, s.adminDismissBlocked, requireAdmin)
	signedIn.GET(adminpath.Review, s.adminReview)
	signedIn.GET(adminpath.MessageTypes, s.adminMessageTypes)
	signedIn.GET(adminpath.NewMessageType, s.adminNewMessageType, requireAdmin)
	signedIn.POST(adminpath.MessageTypes, s.adminCreateMessageType, requireAdmin)
	signedIn.POST(adminpath.NewMessageTypePreview, s.adminPreviewNewMessageType, requireAdmin)
	// The editor of a stored type replays its messages (the impact).
	signedIn.GET(adminpath.MessageType, s.adminMessageType, requireAdmin, s.heavy.limit)
	signedIn.POST(adminpath.MessageType, s.adminSaveMessageType, requireAdmin, s.heavy.limit)
	signedIn.POST(adminpath.MessageTypePreview, s.adminPreviewMessageType, requireAdmin, s.heavy.limit)
	signedIn.GET(adminpath.Users, s.adminUsers)
	signedIn.POST(adminpath.Users, s.adminCreateUser, requireAdmin)
	signedIn.POST(adminpath.UserDisable, s.adminDisableUser, requireAdmin)
	signedIn.POST(adminpath.UserEnable, s.adminEnableUser, requireAdmin)
	signedIn.POST(adminpath.UserResetPassword, s.adminResetPassword, requireAdmin)
	signedIn.GET(adminpath.Destinations, s.adminDestinations)
	signedIn.GET(adminpath.NewDestination, s.adminNewDestination, requireAdmin)
	signedIn.POST(adminpath.Destinations, s.adminCreateDestination, requireAdmin)
	signedIn.GET(adminpath.Destination, s.adminDestination, requireAdmin)
	signedIn.POST(adminpath.Destination, s.adminSaveDestination, requireAdmin)
	signedIn.POST(adminpath.DestinationPause, s.adminPauseDestination, requireAdmin)
	signedIn.POST(adminpath.DestinationResume, s.adminResumeDestination, requireAdmin)
	signedIn.GET(adminpath.DestinationDelete, s.adminConfirmDeleteDestination, requireAdmin)
	signedIn.POST(adminpath.DestinationDelete, s.adminDeleteDestination, requireAdmin)
	signedIn.GET(adminpath.Channels, s.adminChannels)
	signedIn.GET(adminpath.NewChannel, s.adminNewChannel, requireAdmin)
	signedIn.POST(adminpath.Channels, s.adminCreateChannel, requireAdmin)
	signedIn.GET(adminpath.Channel, s.adminChannel)
	signedIn.POST(adminpath.Channel, s.adminSaveChannel, requireAdmin)
	signedIn.POST(adminpath.ChannelTest, s.adminTestChannel, requireAdmin)
	signedIn.POST(adminpath.ChannelDelete, s.adminDeleteChannel, requireAdmin)
	signedIn.GET(adminpath.Deliveries, s.adminDeliveries)
	signedIn.POST(adminpath.DeliveriesRetry, s.adminRetryDeliveries, requireAdmin)
	signedIn.POST(adminpath.DeliveryRetry, s.adminRetryDelivery, requireAdmin)
	signedIn.POST(adminpath.DeliveryRetryNow, s.adminRetryDeliveryNow, requireAdmin)
	signedIn.GET(adminpath.Retention, s.adminRetention)
	signedIn.GET(adminpath.Alerts, s.adminAlerts)
	signedIn.GET(adminpath.Partners, s.adminPartners)
	signedIn.GET(adminpath.Alert, s.adminAlert)
	signedIn.POST(adminpath.AlertAcknowledge, s.adminAcknowledgeAlert, requireAdmin)
	signedIn.GET(adminpath.APIKeys, s.adminAPIKeys)
	signedIn.POST(adminpath.APIKeys, s.adminCreateAPIKey, requireAdmin)
	signedIn.POST(adminpath.APIKeyRevoke, s.adminRevokeAPIKey, requireAdmin)
	signedIn.POST(adminpath.APIKeyRotate, s.adminRotateAPIKey, requireAdmin)
	signedIn.GET(adminpath.Integrations, s.adminIntegrations)
	signedIn.POST(adminpath.IntegrationSecrets, s.adminNewIntegrationSecret, requireAdmin)
	signedIn.POST(adminpath.IntegrationRevoke, s.adminRevokeIntegrationSecret, requireAdmin)
	signedIn.POST(adminpath.IntegrationTolerance, s.adminSetIntegrationTolerance, requireAdmin)
}

// requestLogger logs one line per request with slog. An ingest request's
// line is named "ingest" and leads with its tenant, message and outcome
// (ingestReport.appendLogAttrs): one line a request is half the logging
// cost of a line for the request and another for its outcome.
func (s *Server) requestLogger() echo.MiddlewareFunc {
	return middleware.RequestLoggerWithConfig(middleware.RequestLoggerConfig{
		LogMethod:    true,
		LogURI:       true,
		LogStatus:    true,
		LogLatency:   true,
		LogRequestID: true,
		LogRemoteIP:  true,
		LogError:     true,
		HandleError:  true,
		LogValuesFunc: func(c echo.Context, v middleware.RequestLoggerValues) error {
			msg, attrs := "request", make([]slog.Attr, 0, 14)
			if r, ok := c.Get(ingestReportKey).(*ingestReport); ok {
				msg, attrs = "ingest", r.appendLogAttrs(attrs)
			}
			attrs = append(attrs,
				slog.String("method", v.Method),
				slog.String("uri", bounded(v.URI)),
				slog.Int("status", v.Status),
				slog.Duration("latency", v.Latency),
				slog.String("request_id", v.RequestID),
				slog.String("remote_ip", v.RemoteIP),
			)
			if v.Error != nil {
				attrs = append(attrs, slog.String("error", bounded(v.Error.Error())))
			}
			attrs = appendClientRequestID(c, attrs)
			level := levelOfStatus(v.Status)
			if v.Status < http.StatusBadRequest && isAsset(c.Path()) {
				// A page's stylesheet, scripts and icon are asked for with
				// every page an admin opens: worth a line only when debugging.
				level = slog.LevelDebug
			}
			s.log.LogAttrs(c.Request().Context(), level, msg, attrs...)
			return nil
		},
	})
}

// isAsset reports whether route serves the pages' static files.
func isAsset(route string) bool {
	return strings.HasPrefix(route, "/static") || route == "/favicon.ico"
}

// levelOfStatus is the level of a request's log line: errors for server
// faults, a warning for a request stopped by its time limit, information
// for everything else, a departed client included.
func levelOfStatus(status int) slog.Level {
	switch {
	case status == http.StatusGatewayTimeout:
		return slog.LevelWarn
	case status >= http.StatusInternalServerError:
		return slog.LevelError
	}
	return slog.LevelInfo
}

// maxLoggedLength bounds a value a client can make long (a URI, an error
// that quotes input) in a log line: enough to recognise it, never a
// megabyte per request.
const maxLoggedLength = 512

// bounded cuts s to maxLoggedLength bytes on a character boundary and says
// how long it was.
func bounded(s string) string {
	if len(s) <= maxLoggedLength {
		return s
	}
	cut := maxLoggedLength
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// postOnly answers a request to a path that takes POST only.
func postOnly(c echo.Context) error {
	c.Response().Header().Set(echo.HeaderAllow, http.MethodPost)
	return echo.ErrMethodNotAllowed
}
