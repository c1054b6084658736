//! What the dialect loads: a [`Value`] is a string, a block sequence or a block mapping (every
//! scalar is a string), the shape of `strictyaml.load(text).data`. The constructor builds it;
//! the skills-ref tooling reads it.

/// A parsed frontmatter value, as `strictyaml.load(text).data` returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A scalar (every scalar is a string in this dialect).
    Str(String),
    /// A block sequence.
    List(Vec<Value>),
    /// A block mapping, keys in document order.
    Map(Vec<(String, Value)>),
    /// A plain `=` or `<<` in value position: ruamel has no constructor for these tags and
    /// yields a `TaggedScalar` object, which is not a string. Holds the scalar text.
    Tagged(String),
}
