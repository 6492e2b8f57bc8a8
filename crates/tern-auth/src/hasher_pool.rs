//! The password hashers: a fixed set of threads, each holding the
//! Argon2 memory of one hash (19 MiB), allocated at its first hash and
//! reused for every later one, fed by a bounded queue with a deadline.
//!
//! Why not a fresh buffer per hash on tokio's blocking threads: glibc
//! serves the first 19 MiB buffer with `mmap`, and freeing it raises
//! the allocator's mmap threshold (and its trim threshold, to twice
//! that) past 19 MiB, so that later buffers come from the arenas of the
//! threads that hash and stay there when freed: each arena (up to 8 per
//! core) keeps up to 38 MiB. A burst of 300 failed logins left a fresh
//! process (15 MiB) at 557 MiB, and a semaphore on the number of hashes
//! at once did not help. Here the buffers are never freed, so hashing
//! holds at most `hashers x 19 MiB` however many logins arrive.

use std::{
    panic::{catch_unwind, AssertUnwindSafe},
    sync::{
        mpsc::{self, Receiver, SyncSender, TrySendError},
        Arc, Mutex, OnceLock, PoisonError,
    },
    time::{Duration, Instant},
};

use argon2::Block;
use tokio::sync::oneshot;

use crate::AuthError;

/// How long a hash may wait in the queue before it is refused (`503`):
/// a login that would wait longer is better retried.
const WAIT: Duration = Duration::from_secs(3);
/// Queued hashes per hasher, beyond the ones running: past them a login
/// is refused at once (`503`). A queued hash costs its password and
/// hash strings, not its 19 MiB.
const QUEUE_PER_HASHER: usize = 32;

/// A refusal: the queue is full, or the hash waited past its deadline.
#[derive(Debug)]
struct Busy;

/// A hash to run: with the hasher's memory, or with `None` when it
/// waited too long (it then answers [`Busy`]).
type Task = Box<dyn FnOnce(Option<&mut [Block]>) + Send>;

struct Job {
    deadline: Instant,
    task: Task,
}

/// Hashers sharing one queue.
pub(crate) struct Pool {
    queue: SyncSender<Job>,
    hashers: usize,
    wait: Duration,
}

impl Pool {
    /// `hashers` threads with `blocks` Argon2 blocks each, a queue of
    /// `queue` hashes that wait at most `wait`.
    fn new(hashers: usize, blocks: usize, queue: usize, wait: Duration) -> std::io::Result<Pool> {
        let (tx, rx) = mpsc::sync_channel::<Job>(queue);
        let rx = Arc::new(Mutex::new(rx));
        for n in 0..hashers {
            let rx = rx.clone();
            std::thread::Builder::new()
                .name(format!("tern-argon2-{n}"))
                .spawn(move || hasher(&rx, blocks))?;
        }
        Ok(Pool {
            queue: tx,
            hashers,
            wait,
        })
    }

    /// Runs `f` on a hasher, with its memory: `503` (problem+json,
    /// `Retry-After`) when the queue is full or `f` waited past the
    /// deadline. A caller that goes away (its client disconnected) before
    /// `f` starts costs no hash.
    pub(crate) async fn run<T, F>(&self, f: F) -> Result<T, AuthError>
    where
        T: Send + 'static,
        F: FnOnce(&mut [Block]) -> T + Send + 'static,
    {
        let (tx, rx) = oneshot::channel::<Result<T, Busy>>();
        let task: Task = Box::new(move |memory| match memory {
            None => {
                let _ = tx.send(Err(Busy));
            }
            Some(_) if tx.is_closed() => {}
            Some(memory) => {
                let _ = tx.send(Ok(f(memory)));
            }
        });
        let job = Job {
            deadline: Instant::now() + self.wait,
            task,
        };
        match self.queue.try_send(job) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => return Err(busy()),
            Err(TrySendError::Disconnected(_)) => {
                return Err(AuthError::Internal(
                    "the password hashers are gone".to_owned(),
                ))
            }
        }
        match rx.await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(Busy)) => Err(busy()),
            // The task was dropped unrun: it panicked.
            Err(_) => Err(AuthError::Internal("a password hash failed".to_owned())),
        }
    }

    /// The number of hashes at once.
    pub(crate) fn hashers(&self) -> usize {
        self.hashers
    }
}

fn busy() -> AuthError {
    AuthError::Unavailable(
        "the server is busy checking other passwords: try again in a second".to_owned(),
    )
}

/// One hasher: takes the next job, runs it in its memory (allocated at
/// the first job, then kept), forever.
fn hasher(queue: &Mutex<Receiver<Job>>, blocks: usize) {
    let mut memory: Vec<Block> = Vec::new();
    loop {
        let job = {
            let queue = queue.lock().unwrap_or_else(PoisonError::into_inner);
            match queue.recv() {
                Ok(job) => job,
                Err(_) => return,
            }
        };
        if Instant::now() > job.deadline {
            (job.task)(None);
            continue;
        }
        if memory.is_empty() {
            memory = vec![Block::new(); blocks];
        }
        // A panic drops the task's sender: its caller gets an error, and
        // this hasher goes on (Argon2 writes every block before it reads
        // it, so what a failed hash left in the memory does not matter).
        let _ = catch_unwind(AssertUnwindSafe(|| (job.task)(Some(&mut memory))));
    }
}

/// The process's hashers: one per core (Argon2 keeps a core busy, so
/// more at once would hold more memory without hashing faster), each
/// with the memory of one hash at today's parameters.
pub(crate) fn pool() -> Result<&'static Pool, AuthError> {
    static POOL: OnceLock<Result<Pool, String>> = OnceLock::new();
    POOL.get_or_init(|| {
        let hashers = std::thread::available_parallelism().map_or(1, |n| n.get());
        Pool::new(
            hashers,
            crate::password::BLOCKS,
            hashers * QUEUE_PER_HASHER,
            WAIT,
        )
        .map_err(|e| format!("the password hashers' threads: {e}"))
    })
    .as_ref()
    .map_err(|e| AuthError::Internal(e.clone()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A job that holds its hasher until `release` fires.
    fn hold(pool: &'static Pool) -> (oneshot::Sender<()>, tokio::task::JoinHandle<bool>) {
        let (release, held) = oneshot::channel::<()>();
        let run = tokio::spawn(async move {
            pool.run(move |_| {
                let _ = held.blocking_recv();
                true
            })
            .await
            .unwrap()
        });
        (release, run)
    }

    fn leak(pool: Pool) -> &'static Pool {
        Box::leak(Box::new(pool))
    }

    #[tokio::test]
    async fn a_full_queue_is_refused_at_once_and_a_late_job_when_it_is_taken() {
        // One hasher, one place in the queue, 200 ms of waiting.
        let pool = leak(Pool::new(1, 8, 1, Duration::from_millis(200)).unwrap());
        assert_eq!(pool.hashers(), 1);
        let (release, running) = hold(pool);
        tokio::time::sleep(Duration::from_millis(50)).await;
        // This one waits in the queue ...
        let queued = tokio::spawn(async move { pool.run(|m| m.len()).await });
        tokio::time::sleep(Duration::from_millis(50)).await;
        // ... and this one finds it full.
        let start = Instant::now();
        let full = pool.run(|m| m.len()).await.unwrap_err();
        assert!(start.elapsed() < Duration::from_millis(100));
        assert!(matches!(full, AuthError::Unavailable(_)), "{full}");
        assert!(full.to_string().contains("busy"), "{full}");
        // The queued one passes its deadline before the hasher is free.
        tokio::time::sleep(Duration::from_millis(300)).await;
        release.send(()).unwrap();
        assert!(running.await.unwrap());
        let late = queued.await.unwrap().unwrap_err();
        assert!(matches!(late, AuthError::Unavailable(_)), "{late}");
        // Then the hasher takes work again, in memory of `blocks` blocks.
        assert_eq!(pool.run(|m| m.len()).await.unwrap(), 8);
    }

    #[tokio::test]
    async fn the_memory_is_the_same_for_every_job_and_a_panic_is_survived() {
        let pool = leak(Pool::new(1, 8, 4, Duration::from_secs(5)).unwrap());
        let first = pool.run(|m| m.as_ptr() as usize).await.unwrap();
        let failed = pool.run(|_| -> usize { panic!("a failing hash") }).await;
        assert!(matches!(failed, Err(AuthError::Internal(_))));
        let again = pool.run(|m| m.as_ptr() as usize).await.unwrap();
        assert_eq!(first, again, "the hasher's memory is reused");
    }

    #[tokio::test]
    async fn a_caller_that_left_costs_no_hash() {
        let pool = leak(Pool::new(1, 8, 4, Duration::from_secs(5)).unwrap());
        let (release, running) = hold(pool);
        tokio::time::sleep(Duration::from_millis(50)).await;
        let ran = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = ran.clone();
        let gone = tokio::spawn(async move {
            pool.run(move |_| flag.store(true, std::sync::atomic::Ordering::SeqCst))
                .await
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        gone.abort();
        let _ = gone.await;
        release.send(()).unwrap();
        assert!(running.await.unwrap());
        // The queue is in order: once this one ran, the other was skipped.
        pool.run(|_| ()).await.unwrap();
        assert!(!ran.load(std::sync::atomic::Ordering::SeqCst));
    }
}
