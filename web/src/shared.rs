//! Answers shared while they arrive: whoever asks for a key that is being fetched (or was, and is still kept)
//! awaits the same future instead of fetching and decoding again. Leptos runs a resource a second time when
//! something it awaited changed meanwhile, and one answer may serve several lists (BM25 while vectors arrive,
//! then hybrid), so every file or request that is asked for twice goes through one of these.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::thread::LocalKey;

use futures::future::{FutureExt, LocalBoxFuture, Shared};

use crate::failure::Failure;

type Answer<V> = Shared<LocalBoxFuture<'static, Result<V, Failure>>>;

/// The last `capacity` keys asked for, with their answers (the newest last).
pub struct SharedAnswers<K, V: Clone> {
    capacity: usize,
    kept: RefCell<VecDeque<(K, Answer<V>)>>,
}

impl<K: PartialEq, V: Clone + 'static> SharedAnswers<K, V> {
    /// Keeps at most `capacity` answers (at least one).
    pub const fn new(capacity: usize) -> Self {
        SharedAnswers {
            capacity,
            kept: RefCell::new(VecDeque::new()),
        }
    }

    fn answer(
        &self,
        key: K,
        ask: impl FnOnce() -> LocalBoxFuture<'static, Result<V, Failure>>,
    ) -> Answer<V> {
        let mut kept = self.kept.borrow_mut();
        if let Some((_, answer)) = kept.iter().find(|(k, _)| *k == key) {
            return answer.clone();
        }
        let answer = ask().shared();
        if kept.len() >= self.capacity.max(1) {
            kept.pop_front();
        }
        kept.push_back((key, answer.clone()));
        answer
    }

    fn forget(&self, answer: &Answer<V>) {
        self.kept.borrow_mut().retain(|(_, a)| !a.ptr_eq(answer));
    }
}

/// The answer for `key` from `answers`, asked with `ask` when it has none. A failed answer is forgotten, so the
/// next asker tries again.
pub async fn shared<K: PartialEq + 'static, V: Clone + 'static>(
    answers: &'static LocalKey<SharedAnswers<K, V>>,
    key: K,
    ask: impl FnOnce() -> LocalBoxFuture<'static, Result<V, Failure>>,
) -> Result<V, Failure> {
    let answer = answers.with(|a| a.answer(key, ask));
    let result = answer.clone().await;
    if result.is_err() {
        answers.with(|a| a.forget(&answer));
    }
    result
}
