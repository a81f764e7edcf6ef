//! Conversion between message formats (in progress).
