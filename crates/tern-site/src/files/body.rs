//! A file's bytes as a response body of known length.

use std::{
    pin::Pin,
    task::{Context, Poll},
};

use bytes::Bytes;
use futures_util::Stream;
use http_body::{Frame, SizeHint};
use tokio::io::AsyncRead;
use tokio_util::io::ReaderStream;

/// Reads a file (or a part of it) in chunks of 64 KiB, with its exact
/// length announced, so the answer carries `Content-Length`.
pub(crate) struct FileBody<R> {
    stream: ReaderStream<R>,
    remaining: u64,
}

impl<R: AsyncRead + Unpin> FileBody<R> {
    /// `len` bytes of `reader` (a file, already positioned and limited).
    pub(crate) fn new(reader: R, len: u64) -> Self {
        FileBody {
            stream: ReaderStream::with_capacity(reader, 64 * 1024),
            remaining: len,
        }
    }
}

impl<R: AsyncRead + Unpin> http_body::Body for FileBody<R> {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if this.remaining == 0 {
            return Poll::Ready(None);
        }
        match Pin::new(&mut this.stream).poll_next(cx) {
            Poll::Ready(Some(Ok(chunk))) => {
                this.remaining = this.remaining.saturating_sub(chunk.len() as u64);
                Poll::Ready(Some(Ok(Frame::data(chunk))))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e))),
            Poll::Ready(None) => Poll::Ready(Some(Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the file got shorter while it was sent",
            )))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.remaining == 0
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}
