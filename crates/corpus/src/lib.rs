//! gii-norm parser.
