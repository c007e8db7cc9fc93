//! rmcp's in-memory sessions, counted as they open and end: an open HTTP session is an
//! attached front end, so a server started in the background does not end under an agent
//! that reaches it over HTTP alone (server/lifetime.rs), and the cap on sessions reads the
//! same count.

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    EventStore, RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};
use std::sync::Arc;
use tokio::sync::watch;

/// The sessions, and how many are open as it changes. Every path by which one opens or
/// ends (`initialize`, `DELETE`, expiry, the server stopping) goes through
/// `create_session`/`restore_session` or `close_session`: rmcp closes a session whose
/// service ended, however it ended.
pub struct CountedSessions {
    inner: LocalSessionManager,
    open: watch::Sender<usize>,
}

impl CountedSessions {
    pub fn new(inner: LocalSessionManager) -> Arc<Self> {
        Arc::new(CountedSessions {
            inner,
            open: watch::Sender::new(0),
        })
    }

    /// How many sessions are open now.
    pub async fn open(&self) -> usize {
        self.inner.sessions.read().await.len()
    }

    /// How many sessions are open, as it changes.
    pub fn watch(&self) -> watch::Receiver<usize> {
        self.open.subscribe()
    }

    async fn recount(&self) {
        let open = self.open().await;
        self.open
            .send_if_modified(|was| std::mem::replace(was, open) != open);
    }
}

impl SessionManager for CountedSessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let created = self.inner.create_session().await;
        self.recount().await;
        created
    }

    fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<ServerJsonRpcMessage, Self::Error>> + Send {
        self.inner.initialize_session(id, message)
    }

    fn has_session(
        &self,
        id: &SessionId,
    ) -> impl Future<Output = Result<bool, Self::Error>> + Send {
        self.inner.has_session(id)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let closed = self.inner.close_session(id).await;
        self.recount().await;
        closed
    }

    fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> impl Future<
        Output = Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error>,
    > + Send {
        self.inner.create_stream(id, message)
    }

    fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.accept_message(id, message)
    }

    fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> impl Future<
        Output = Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error>,
    > + Send {
        self.inner.create_standalone_stream(id)
    }

    fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> impl Future<
        Output = Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error>,
    > + Send {
        self.inner.resume(id, last_event_id)
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        let restored = self.inner.restore_session(id).await;
        self.recount().await;
        restored
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}
