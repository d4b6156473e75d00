//! Protobuf schemas as the registry holds them: `.proto` text (proto2 or proto3), or a
//! `FileDescriptorProto` in base64 (what Confluent's non-Java clients register), compiled with the files
//! their references name (by import path) and the built-in imports into descriptors.

use std::collections::BTreeMap;

use base64::Engine;
use prost::Message;
use prost_reflect::{DescriptorPool, FileDescriptor, MessageDescriptor};
use protox::file::{ChainFileResolver, File, FileResolver, GoogleFileResolver};

use super::builtin;

/// The import path the registered schema itself is compiled under when it is `.proto` text.
pub const ROOT: &str = "schema.proto";

/// A Protobuf schema, compiled.
#[derive(Clone, Debug)]
pub struct ProtoSchema {
    /// The text as registered.
    pub text: String,
    /// The schema's file in its descriptor pool (with every file it imports).
    pub file: FileDescriptor,
    /// The files its references name, transitively: import path → text.
    pub sources: BTreeMap<String, String>,
}

/// A base64 `FileDescriptorProto`, when the text is one (`.proto` text always has white space).
fn as_descriptor(text: &str) -> Option<Vec<u8>> {
    let text = text.trim();
    if text.is_empty() || text.contains(char::is_whitespace) {
        return None;
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .ok()?;
    prost_types::FileDescriptorProto::decode(bytes.as_slice()).ok()?;
    Some(bytes)
}

/// A file from its text, under `name`.
fn file_from_text(name: &str, text: &str) -> Result<File, protox::Error> {
    match as_descriptor(text) {
        Some(bytes) => {
            File::decode_file_descriptor_proto(bytes.as_slice()).map_err(protox::Error::new)
        }
        None => File::from_source(name, text),
    }
}

/// Resolves imports from the references' files and the built-in ones.
struct Sources(BTreeMap<String, String>);

impl FileResolver for Sources {
    fn open_file(&self, name: &str) -> Result<File, protox::Error> {
        if let Some(text) = self.0.get(name) {
            return file_from_text(name, text);
        }
        match builtin::FILES.iter().find(|(n, _)| *n == name) {
            Some((_, text)) => File::from_source(name, text),
            None => Err(protox::Error::file_not_found(name)),
        }
    }
}

impl ProtoSchema {
    /// Compiles `text` with the files its references name (`refs`: import path → text, the references'
    /// own references included).
    ///
    /// # Errors
    /// The compiler's message: a syntax error, an unknown type, an import no reference names.
    pub fn parse(text: &str, refs: BTreeMap<String, String>) -> Result<Self, String> {
        let root = match as_descriptor(text) {
            Some(bytes) => prost_types::FileDescriptorProto::decode(bytes.as_slice())
                .map_err(|e| e.to_string())?
                .name
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| ROOT.to_string()),
            None => ROOT.to_string(),
        };
        let mut sources = refs;
        sources.insert(root.clone(), text.to_string());
        let mut chain = ChainFileResolver::new();
        chain.add(Sources(sources.clone()));
        chain.add(GoogleFileResolver::new());
        let mut compiler = protox::Compiler::with_file_resolver(chain);
        compiler.include_imports(true);
        compiler.open_file(&root).map_err(|e| describe(&e))?;
        let pool: DescriptorPool = compiler.descriptor_pool();
        let file = pool
            .get_file_by_name(&root)
            .ok_or_else(|| format!("the compiled schema has no file {root}"))?;
        sources.remove(&root);
        if file.messages().len() == 0 {
            return Err("the schema defines no message".into());
        }
        Ok(ProtoSchema {
            text: text.to_string(),
            file,
            sources,
        })
    }

    /// The canonical text: the text as registered, without the white space around it.
    pub fn canonical(&self) -> String {
        self.text.trim().to_string()
    }

    /// The schema's `FileDescriptorProto` in base64 (the registry's `format=serialized`).
    pub fn serialized(&self) -> String {
        match as_descriptor(&self.text) {
            Some(_) => self.text.trim().to_string(),
            None => base64::engine::general_purpose::STANDARD
                .encode(self.file.file_descriptor_proto().encode_to_vec()),
        }
    }

    /// The message that Confluent's message indexes name: the first index among the file's top-level
    /// messages, each next one among the previous one's nested messages.
    ///
    /// # Errors
    /// An index past the messages there are.
    pub fn message_at(&self, indexes: &[i32]) -> Result<MessageDescriptor, String> {
        let bad = || format!("message indexes {indexes:?} name no message of the schema");
        let mut iter = indexes.iter();
        let first = iter.next().copied().unwrap_or(0);
        let mut message = usize::try_from(first)
            .ok()
            .and_then(|i| self.file.messages().nth(i))
            .ok_or_else(bad)?;
        for i in iter {
            message = usize::try_from(*i)
                .ok()
                .and_then(|i| message.child_messages().nth(i))
                .ok_or_else(bad)?;
        }
        Ok(message)
    }

    /// The message indexes of a message of this file (the inverse of [`ProtoSchema::message_at`]).
    pub fn indexes_of(&self, message: &MessageDescriptor) -> Vec<i32> {
        let mut path = Vec::new();
        let mut current = message.clone();
        loop {
            match current.parent_message() {
                Some(parent) => {
                    let at = parent.child_messages().position(|m| m == current);
                    path.push(at.and_then(|i| i32::try_from(i).ok()).unwrap_or(0));
                    current = parent;
                }
                None => {
                    let at = self.file.messages().position(|m| m == current);
                    path.push(at.and_then(|i| i32::try_from(i).ok()).unwrap_or(0));
                    break;
                }
            }
        }
        path.reverse();
        path
    }
}

/// A compiler error with where it is, when the compiler says.
fn describe(e: &protox::Error) -> String {
    match e.file() {
        Some(file) if file != ROOT => format!("{file}: {e}"),
        _ => e.to_string(),
    }
}
