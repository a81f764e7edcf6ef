//! `--isolation`: the codec's [`IsolationLevel`] as a flag.

use krecords_codec::txn::IsolationLevel;

/// The value parser of an `--isolation` flag: `read-committed` and `read-uncommitted` (also
/// spelled with `_`), each listed in the help with its text, in the order given.
pub fn isolation_parser(
    values: [(IsolationLevel, &'static str); 2],
) -> impl clap::builder::TypedValueParser<Value = IsolationLevel> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(values.map(|(level, help)| {
        let flag = match level {
            IsolationLevel::ReadCommitted => "read-committed",
            IsolationLevel::ReadUncommitted => "read-uncommitted",
        };
        PossibleValue::new(flag).help(help).alias(level.name())
    }))
    .try_map(|s| s.parse::<IsolationLevel>())
}
