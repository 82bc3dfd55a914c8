//! `myao serve` is not held by slow clients (issue 56): a client that
//! dribbles its request's head is closed at the head's deadline, and one
//! that has not sent its head yet is closed to make room for a new
//! connection rather than keep a prompt request waiting.

use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::serve::{running_with, status_of_another_path, until_closed};
use myao_local::serve;

/// Opens a connection and sends the first bytes of a request's head.
async fn half_a_head(addr: std::net::SocketAddr) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.expect("connected");
    stream
        .write_all(b"POST /slack/events HTTP/1.1\r\nhost: x\r\n")
        .await
        .expect("sent");
    stream
}

/// Waits (a few seconds at most) until the server has `n` connections open.
async fn until_open(open: &std::sync::atomic::AtomicUsize, n: usize) -> usize {
    for _ in 0..100 {
        if open.load(Ordering::SeqCst) == n {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    open.load(Ordering::SeqCst)
}

#[tokio::test]
async fn a_client_without_its_head_is_closed_to_make_room_for_a_prompt_one() {
    // Every place taken by a client that has sent half its head, each
    // long before its deadline.
    let limits = serve::Limits {
        headers: Duration::from_secs(60),
        connection: Duration::from_secs(120),
        connections: 2,
        ..serve::Limits::default()
    };
    let (addr, open, stop, running, _stubs) = running_with(limits, &[]).await;
    let mut oldest = half_a_head(addr).await;
    assert_eq!(until_open(&open, 1).await, 1);
    let mut newer = half_a_head(addr).await;
    assert_eq!(until_open(&open, 2).await, 2);

    // A prompt request is answered at once, not after a slow one's deadline...
    let status = tokio::time::timeout(Duration::from_secs(20), status_of_another_path(addr)).await;
    assert_eq!(
        status,
        Ok(404),
        "answered while the slow ones hold every place"
    );
    // ...because the client waiting longest for its request was closed, with
    // nothing said; the newer one is still open.
    assert_eq!(
        until_closed(&mut oldest, Duration::from_secs(5)).await,
        Some(String::new())
    );
    assert_eq!(
        until_closed(&mut newer, Duration::from_millis(300)).await,
        None
    );
    stop.send(()).expect("running");
    running.await.expect("joined").expect("stopped");
}

#[tokio::test]
async fn a_head_that_trickles_in_is_closed_at_its_deadline_however_often_a_byte_comes() {
    use tokio::io::AsyncReadExt;
    let limits = serve::Limits {
        headers: Duration::from_secs(1),
        ..serve::Limits::default()
    };
    let (addr, open, stop, running, _stubs) = running_with(limits, &[]).await;
    // A byte every 100 ms: each comes well within the deadline, the whole
    // head (6 s of bytes) far past it.
    let head = format!(
        "POST /slack/events HTTP/1.1\r\nhost: x\r\nx-pad: {}\r\n\r\n",
        "a".repeat(20)
    );
    let (mut reader, mut writer) = TcpStream::connect(addr)
        .await
        .expect("connected")
        .into_split();
    let mut sent = 0;
    let mut answer = Vec::new();
    let closed = async {
        let _ = reader.read_to_end(&mut answer).await;
    };
    tokio::pin!(closed);
    for byte in head.as_bytes() {
        tokio::select! {
            () = &mut closed => break,
            () = tokio::time::sleep(Duration::from_millis(100)) => {}
        }
        if writer.write_all(&[*byte]).await.is_err() {
            break;
        }
        sent += 1;
    }
    assert!(
        sent < head.len(),
        "closed before its head was whole ({sent} of {} bytes)",
        head.len()
    );
    assert!(answer.is_empty(), "nothing answered");
    assert_eq!(until_open(&open, 0).await, 0);
    stop.send(()).expect("running");
    running.await.expect("joined").expect("stopped");
}
