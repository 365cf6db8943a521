//! LRU cache of recent query vectors.
//!
//! Users repeat queries (reloading a result page, going back, popular questions); a cached vector costs a
//! hash lookup instead of a forward pass on a shared 2-core machine. Keys are the exact query text: the same
//! text always yields the same vector from the same model, so the answer is identical to a fresh embedding.

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

use lru::LruCache;

/// A thread-safe LRU map from query text to its vector; capacity 0 disables it.
pub struct VectorCache {
    inner: Option<Mutex<LruCache<String, Arc<[f32]>>>>,
}

impl VectorCache {
    /// A cache holding at most `capacity` vectors.
    pub fn new(capacity: usize) -> Self {
        VectorCache {
            inner: NonZeroUsize::new(capacity).map(|cap| Mutex::new(LruCache::new(cap))),
        }
    }

    /// The cached vector of `text`, marking it recently used.
    pub fn get(&self, text: &str) -> Option<Arc<[f32]>> {
        let cache = self.inner.as_ref()?;
        cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(text)
            .cloned()
    }

    /// Remembers the vector of `text`, evicting the least recently used entry when full.
    pub fn put(&self, text: &str, vector: Arc<[f32]>) {
        if let Some(cache) = &self.inner {
            cache
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .put(text.to_owned(), vector);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_least_recently_used() {
        let cache = VectorCache::new(2);
        cache.put("a", Arc::from([1.0f32]));
        cache.put("b", Arc::from([2.0f32]));
        assert_eq!(cache.get("a").as_deref(), Some(&[1.0f32][..]));
        cache.put("c", Arc::from([3.0f32]));
        assert!(cache.get("b").is_none(), "b was least recently used");
        assert!(cache.get("a").is_some() && cache.get("c").is_some());
    }

    #[test]
    fn zero_capacity_disables() {
        let cache = VectorCache::new(0);
        cache.put("a", Arc::from([1.0f32]));
        assert!(cache.get("a").is_none());
    }
}
