//! Every process a test starts is owned by a guard (issue 48, item 16): an
//! [`Owned`] child still running when its guard drops, as the test ends,
//! passing or failing, is ended and reaped then. A test that panics before
//! its SIGINT (a root `perfz record -a`, say) thus ends what it started as
//! it unwinds, not when the binary exits (reaper.rs, the net under this).
//! Ending: SIGTERM first (a recorder then finishes its file and ends its
//! workload, as it does for a user), SIGKILL after 5 s, then the wait. A
//! child already waited for is left alone, so tests still end what they
//! start themselves; the guard only ends what they did not.

use std::io::Read;
use std::ops::{Deref, DerefMut};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

/// How long a child has after SIGTERM before SIGKILL.
pub const GRACE: Duration = Duration::from_secs(5);

/// A started child, ended and reaped when dropped if it was not reaped
/// before. Derefs to the [`Child`] (`id`, `wait`, `try_wait`, `kill`,
/// `stdout.take()`, ...); what consumes a `Child` has its equivalent here.
pub struct Owned {
    child: Child,
    /// Reaped by [`Owned::wait4`], out of sight of `Child`: its pid may name
    /// another process by now, so Drop leaves it alone.
    reaped: bool,
}

/// `Command::spawn`, the child under a guard.
pub trait SpawnOwned {
    fn spawn_owned(&mut self) -> std::io::Result<Owned>;
}

impl SpawnOwned for Command {
    fn spawn_owned(&mut self) -> std::io::Result<Owned> {
        let child = self.spawn()?;
        Ok(Owned {
            child,
            reaped: false,
        })
    }
}

impl Deref for Owned {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.child
    }
}

impl DerefMut for Owned {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.child
    }
}

impl Owned {
    /// `Child::wait_with_output`, the guard held throughout: an error on the
    /// way ends the child as the guard drops.
    pub fn wait_with_output(mut self) -> std::io::Result<Output> {
        drop(self.stdin.take());
        // Both pipes at once, as std does: either may fill while the other
        // is read.
        let err = self.stderr.take().map(|mut e| {
            std::thread::spawn(move || {
                let mut v = Vec::new();
                e.read_to_end(&mut v).map(|_| v)
            })
        });
        let mut stdout = Vec::new();
        if let Some(mut o) = self.stdout.take() {
            o.read_to_end(&mut stdout)?;
        }
        let stderr = match err {
            Some(t) => t
                .join()
                .unwrap_or_else(|_| Err(std::io::Error::other("the stderr reader panicked")))?,
            None => Vec::new(),
        };
        let status = self.wait()?;
        Ok(Output {
            status,
            stdout,
            stderr,
        })
    }

    /// Reaps the child with wait4(2), for its rusage (peak RSS, which
    /// `wait` does not give): its raw wait status and its rusage.
    pub fn wait4(mut self) -> std::io::Result<(libc::c_int, libc::rusage)> {
        let pid = self.id() as i32;
        let mut status = 0;
        // SAFETY: rusage is plain integers, for which all zeroes is a value.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: status and ru are ours and writable for the call; the pid
        // is our child, not reaped before (`Child` reaps only in its waits,
        // and after one of those this process has no child of that pid).
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if r != pid {
            return Err(std::io::Error::last_os_error());
        }
        self.reaped = true;
        Ok((status, ru))
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        // Waited for already (or not waitable): nothing of it is left.
        if self.reaped || !matches!(self.child.try_wait(), Ok(None)) {
            return;
        }
        // SAFETY: kill(2) takes no pointers; the child is not reaped (it
        // may have exited since, a zombie whose pid is still its own).
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let start = Instant::now();
        while matches!(self.child.try_wait(), Ok(None)) {
            if start.elapsed() >= 2 * GRACE {
                // Not even SIGKILL ends it (D state): left to reaper.rs.
                return;
            }
            if start.elapsed() >= GRACE {
                let _ = self.child.kill();
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
