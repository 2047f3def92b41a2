//! A small type map for data one layer hands to another through the seam without core knowing
//! its type (e.g. the in-process runtime's parent snapshot that the fork provider reads).

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Arc;

/// Values keyed by their type. Cloning shares the values.
#[derive(Clone, Default)]
pub struct Extensions {
    map: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

impl Extensions {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Stores `value`, replacing any value of the same type.
    pub fn insert<T: Any + Send + Sync>(&mut self, value: T) {
        self.map.insert(TypeId::of::<T>(), Arc::new(value));
    }

    /// Stores an already shared value.
    pub fn insert_arc<T: Any + Send + Sync>(&mut self, value: Arc<T>) {
        self.map.insert(TypeId::of::<T>(), value);
    }

    /// The value of type `T`, if any.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        self.map
            .get(&TypeId::of::<T>())
            .and_then(|value| Arc::clone(value).downcast::<T>().ok())
    }

    /// A copy of the value of type `T`, or `T`'s default when none is stored (e.g. the
    /// `Secrets` a provider factory withholds from its children: none configured, none withheld).
    pub fn cloned_or_default<T: Any + Send + Sync + Clone + Default>(&self) -> T {
        self.get::<T>()
            .map(|value| T::clone(&value))
            .unwrap_or_default()
    }

    /// Whether no value is stored.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Extensions")
            .field("len", &self.map.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Debug, Default, PartialEq)]
    struct Withheld(Vec<String>);

    #[test]
    fn cloned_or_default_copies_the_stored_value_or_gives_the_default() {
        let mut extensions = Extensions::new();
        assert_eq!(
            extensions.cloned_or_default::<Withheld>(),
            Withheld::default()
        );
        extensions.insert(Withheld(vec!["KEY".to_owned()]));
        assert_eq!(
            extensions.cloned_or_default::<Withheld>(),
            Withheld(vec!["KEY".to_owned()])
        );
        // A copy: the stored value stays.
        assert!(extensions.get::<Withheld>().is_some());
    }
}
