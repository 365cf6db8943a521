//! The bounded fuzz run of every `cargo test`: a fixed seed, [`INPUTS`] mutated inputs per target, over the readers
//! of untrusted files — law and strategy bundles (then index and search), the thesaurus file (then a law's
//! expansion table, expansion and weighted search), the index across laws (head and posting shards, then search in every mode; the law finder's
//! topics, then the finder; the cited-by file, then its lookups), the learned file (then learned search in every mode), the browser's
//! e5 model file (then embedding), the manifest, the law XML parser and the model
//! container. Seeds are real files (the GG test bundles, the GG's XML) plus a tiny model container;
//! mutation and the per-input work are `paragraf_fuzz`'s, shared with the cargo-fuzz targets for long runs.
//! Each target runs its inputs in a child process capped at 2 GiB of address space, so an input that allocates
//! without bound aborts there and fails the target by name. Also fuzzed: the federal archive reader (tar in xz,
//! with extension headers), the download's zip reader, law XML with hostile document types, the proxy's
//! request bodies, EmbeddingGemma's `tokenizer.json` reader, and `paragraf mcp` fed mutated JSON-RPC messages. A panic, an abort or an endless loop fails the test; each target also must decode some of
//! its inputs, so the run provably reaches past the checksums.

use crate::util::{gg_bundles, shared};
use paragraf_core::manifest::Manifest;
use paragraf_engine::bundle::{StrategyBundle, LAW_BUNDLE, STRATEGY_BUNDLE};
use paragraf_fuzz::{self as fuzz, Mutator};
use paragraf_index::hnsw::Builder;
use paragraf_index::vectors::VectorStore;
use std::path::Path;
use std::time::Instant;

/// Inputs per target.
const INPUTS: usize = 20_000;
/// The run's seed (printed, so a failure can be replayed).
const SEED: u64 = 0x5041_5241_4752_4146;
/// The address space each target's inputs run in: every target re-runs itself in a child process under this
/// cap (`prlimit --as`, util-linux), so an input that would allocate without bound aborts there — and fails
/// the target here, named — instead of taking the machine down or passing unnoticed.
const MEMORY_CAP_BYTES: u64 = 2 << 30;
/// Set in the child that runs a target's inputs, to the target's name (a test may hold several targets; the
/// child runs only the one it was started for).
pub const CHILD: &str = "PARAGRAF_FUZZ_CHILD";

/// Runs `check` over [`INPUTS`] mutations of the seeds in a memory-capped child ([`MEMORY_CAP_BYTES`]) and
/// prints the count; `check` says whether the input was accepted. Returns how many were.
fn run(
    target: &str,
    seeds: &[Vec<u8>],
    mutate: impl FnMut(&mut Mutator, &[u8], &[u8]) -> Vec<u8>,
    check: impl FnMut(&[u8]) -> bool,
) -> usize {
    run_n(target, INPUTS, seeds, mutate, check)
}

/// [`run`] with `inputs` inputs (targets whose every input costs a compression). Returns how many were
/// accepted (0 in a child started for another target of the same test).
fn run_n(
    target: &str,
    inputs: usize,
    seeds: &[Vec<u8>],
    mut mutate: impl FnMut(&mut Mutator, &[u8], &[u8]) -> Vec<u8>,
    mut check: impl FnMut(&[u8]) -> bool,
) -> usize {
    match std::env::var(CHILD) {
        Err(_) => return in_capped_child(target),
        Ok(wanted) if wanted != target => return 0,
        Ok(_) => {}
    }
    let started = Instant::now();
    let mut mutator = Mutator::new(SEED);
    let mut accepted = 0;
    for i in 0..inputs {
        let input = mutate(
            &mut mutator,
            &seeds[i % seeds.len()],
            &seeds[(i + 1) % seeds.len()],
        );
        accepted += usize::from(check(&input));
    }
    eprintln!(
        "fuzz {target}: {inputs} inputs (seed {SEED:#x}), {accepted} accepted, {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(
        accepted > 0,
        "{target}: no mutated input decoded; the run never got past the checks"
    );
    accepted
}

/// Runs the current test again in a child process capped at [`MEMORY_CAP_BYTES`] of address space; an abort, a
/// signal or a failure there fails it here with the child's last words. Returns the inputs it accepted.
fn in_capped_child(target: &str) -> usize {
    let test = std::thread::current()
        .name()
        .filter(|name| name.starts_with("fuzz::"))
        .map(str::to_string)
        .unwrap_or_else(|| panic!("fuzz {target}: the test's thread is not named after it (one test thread?); run the fuzz tests with the default test threads"));
    let started = Instant::now();
    let out = std::process::Command::new("prlimit")
        .arg(format!("--as={MEMORY_CAP_BYTES}"))
        .arg("--")
        .arg(std::env::current_exe().unwrap())
        .args([
            test.as_str(),
            "--exact",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(CHILD, target)
        .output()
        .expect("run prlimit (util-linux, installed by scripts/setup.sh)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let words: String = stderr
        .lines()
        .rev()
        .take(15)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect::<Vec<_>>()
        .join("\n");
    use std::os::unix::process::ExitStatusExt;
    match out.status.signal() {
        Some(6) => panic!("fuzz {target}: aborted (SIGABRT) under a {} GiB address-space cap: an allocation failed or the process gave up\n{words}", MEMORY_CAP_BYTES >> 30),
        Some(signal) => panic!("fuzz {target}: killed by signal {signal} under a {} GiB address-space cap\n{words}", MEMORY_CAP_BYTES >> 30),
        None => assert!(out.status.success(), "fuzz {target}: {}\n{words}", out.status),
    }
    let line = stderr
        .lines()
        .find(|l| l.starts_with(&format!("fuzz {target}: ")))
        .unwrap_or_else(|| panic!("fuzz {target}: the child ran no inputs\n{words}"));
    eprintln!(
        "{line} (child capped at {} GiB, {:.1} s)",
        MEMORY_CAP_BYTES >> 30,
        started.elapsed().as_secs_f64()
    );
    line.split(", ")
        .find_map(|part| part.strip_suffix(" accepted"))
        .and_then(|n| n.parse().ok())
        .expect("the child's line says how many inputs it accepted")
}

fn bundle_files(kind: &str) -> Vec<Vec<u8>> {
    let dir = gg_bundles();
    let manifest = Manifest::parse(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let files: Vec<&str> = match kind {
        "law" => manifest.laws.iter().map(|l| l.file.as_str()).collect(),
        _ => manifest.bundles.iter().map(|b| b.file.as_str()).collect(),
    };
    files
        .iter()
        .map(|f| std::fs::read(dir.join(f)).unwrap())
        .collect()
}

#[test]
fn law_bundles() {
    let seeds = bundle_files("law");
    run(
        "law bundle",
        &seeds,
        |m, seed, donor| m.mutate_framed(seed, donor, LAW_BUNDLE),
        |input| fuzz::law_bundle(input).is_some(),
    );
}

#[test]
fn strategy_bundles_with_index_and_search() {
    let law = fuzz::law_bundle(&bundle_files("law")[0]).expect("the GG law bundle decodes");
    let mut seeds = bundle_files("strategy");
    // One seed with an HNSW graph, so the graph decoder and walk are fuzzed too.
    let mut bundle = StrategyBundle::from_bytes(seeds.last().unwrap()).unwrap();
    let VectorStore::Int8(vectors) = &bundle.vectors else {
        panic!("the test bundles are int8")
    };
    bundle.hnsw = Some(Builder::default().seed(1).build(vectors));
    seeds.push(bundle.to_bytes());
    run(
        "strategy bundle",
        &seeds,
        |m, seed, donor| m.mutate_framed(seed, donor, STRATEGY_BUNDLE),
        |input| {
            fuzz::strategy_bundle(&law, input);
            StrategyBundle::from_bytes(input).is_ok()
        },
    );
}

/// Seeds: thesaurus files made as the GG test bundles' was (same generator, notice, parameters and analyzer) from
/// two slices of 400 lines of the real thesaurus. The whole file (about a megabyte) would make each input cost
/// tens of milliseconds, and mutations near its end are what the slices' mutations already reach.
#[test]
fn thesaurus_files_with_expansion_and_search() {
    use paragraf_engine::expansion::thesaurus::Thesaurus;
    use paragraf_engine::expansion::{PreparedThesaurus, ThesaurusFile};
    let dir = gg_bundles();
    let manifest = Manifest::parse(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let file = manifest
        .expansions
        .as_ref()
        .and_then(|e| e.built())
        .map(|t| &t.file)
        .expect("the GG test bundles have a thesaurus file");
    let whole = ThesaurusFile::from_bytes(&std::fs::read(dir.join(file)).unwrap()).unwrap();
    let text = std::fs::read_to_string(paragraf_bundler::expansion::DEFAULT_THESAURUS).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let seeds: Vec<Vec<u8>> = [&lines[..400], &lines[4000..4400]]
        .iter()
        .map(|slice| {
            let thesaurus = Thesaurus::parse(&slice.join("\n")).unwrap();
            ThesaurusFile {
                thesaurus: PreparedThesaurus::new(&thesaurus, whole.thesaurus.analyzer()),
                ..whole.clone()
            }
            .to_bytes()
        })
        .collect();
    let law = fuzz::law_bundle(&bundle_files("law")[0]).expect("the GG law bundle decodes");
    run(
        "thesaurus file",
        &seeds,
        |m, seed, donor| m.mutate_framed(seed, donor, paragraf_engine::expansion::KIND),
        |input| fuzz::thesaurus_file(input, Some(&law)),
    );
}

/// Seeds: files learned for the GG test folder from questions written for the learning test (BM25 only, and
/// with the folder's `section` vectors: dense and hybrid rankers, question vectors).
#[test]
fn learned_files_with_learned_search() {
    let tmp = crate::util::temp_dir();
    let dir = tmp.path().join("gg");
    crate::util::copy_folder(gg_bundles(), &dir);
    let questions = crate::learn::gg_questions(tmp.path());
    let mut seeds = Vec::new();
    for strategies in ["none", "section"] {
        let out = crate::learn::run_learn(
            &questions,
            &dir,
            &["--strategies", strategies, "--folds", "2"],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let manifest = Manifest::parse(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
        seeds.push(std::fs::read(dir.join(&manifest.learned.unwrap().file.file)).unwrap());
    }
    let law = fuzz::law_bundle(&bundle_files("law")[0]).expect("the GG law bundle decodes");
    run(
        "learned file",
        &seeds,
        |m, seed, donor| m.mutate_framed(seed, donor, paragraf_engine::learning::KIND),
        |input| fuzz::learned_file(input, Some(&law)),
    );
}

#[test]
fn topics_files_with_the_law_finder() {
    let dir = crate::util::federal_sample_bundles();
    let manifest = Manifest::parse(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let topics = manifest
        .federal
        .as_ref()
        .and_then(|f| f.topics.as_ref())
        .expect("the sample's index has a topics file");
    let seeds = vec![std::fs::read(dir.join(&topics.file)).unwrap()];
    run(
        "topics file",
        &seeds,
        |m, seed, donor| m.mutate_framed(seed, donor, paragraf_core::finder::TOPICS),
        |input| fuzz::topics_file(input, &manifest.laws),
    );
}

#[test]
fn cited_by_files() {
    let dir = crate::util::federal_sample_bundles();
    let manifest = Manifest::parse(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let shards = &manifest
        .federal
        .as_ref()
        .expect("the sample has an index across laws")
        .cited_by;
    // The first shard (listed under no law) is the seed: mutants are read as it.
    let first = shards
        .first()
        .expect("the sample's index has cited-by shards");
    let seeds = vec![std::fs::read(dir.join(&first.file.file)).unwrap()];
    assert!(
        fuzz::cited_by_file(&seeds[0], &first.from),
        "the sample's cited-by shard decodes"
    );
    run(
        "cited-by file",
        &seeds,
        |m, seed, donor| m.mutate_framed(seed, donor, paragraf_core::federal::cited::CITED_BY),
        |input| fuzz::cited_by_file(input, ""),
    );
}

#[test]
fn federal_index_files() {
    let dir = crate::util::federal_sample_bundles();
    let manifest = Manifest::parse(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let federal = manifest
        .federal
        .expect("the sample has an index across laws");
    let read = |file: &str| std::fs::read(dir.join(file)).unwrap();
    let head = read(&federal.head.file);
    let shards: Vec<Vec<u8>> = federal.shards.iter().map(|s| read(&s.file)).collect();
    let shard_refs: Vec<&[u8]> = shards.iter().map(Vec::as_slice).collect();
    let vectors = read(
        &federal
            .vectors
            .expect("the sample's index has vectors")
            .file
            .file,
    );
    use paragraf_core::federal::files::{FederalHead, HEAD, SHARD, VECTORS};
    let decoded = FederalHead::from_bytes(&head).unwrap();
    // Mutated heads with the real shards and vectors, then the real head with mutated shards or vectors.
    run(
        "federal head",
        std::slice::from_ref(&head),
        |m, seed, donor| m.mutate_framed(seed, donor, HEAD),
        |input| fuzz::federal_files(input, &shard_refs, &vectors),
    );
    run(
        "posting shard",
        &shards,
        |m, seed, donor| m.mutate_framed(seed, donor, SHARD),
        |input| {
            fuzz::federal_files(&head, &[input], &vectors);
            decoded.shard_from_bytes(0, input).is_ok()
        },
    );
    run(
        "federal vectors",
        std::slice::from_ref(&vectors),
        |m, seed, donor| m.mutate_framed(seed, donor, VECTORS),
        |input| {
            fuzz::federal_files(&head, &shard_refs, input);
            decoded.vectors_from_bytes(input).is_ok()
        },
    );
}

#[test]
fn browser_model_files() {
    // The tiny model (the real file is 22 MB: 20,000 copies would take minutes, and every shape check is the same).
    let seeds = vec![paragraf_e5::file::ModelFile {
        model: paragraf_format::models::E5_MODEL_ID.into(),
        weights: paragraf_e5::model::tiny_weights().prune([5, 9]),
    }
    .to_bytes()];
    run(
        "browser model file",
        &seeds,
        |m, seed, donor| m.mutate_framed(seed, donor, paragraf_e5::file::KIND),
        fuzz::model_file,
    );
}

#[test]
fn manifests() {
    let seeds = vec![std::fs::read(gg_bundles().join("manifest.json")).unwrap()];
    run("manifest", &seeds, Mutator::mutate, |input| {
        Manifest::parse(input).is_ok()
    });
}

#[test]
fn law_xml() {
    // The GG's preamble and first articles: real markup, small enough to parse 20,000 times in seconds.
    let xml = std::fs::read_to_string(shared("corpus/GG.xml")).unwrap();
    let parts: Vec<&str> = xml.split("<norm ").collect();
    let seeds = vec![
        format!("{}</dokumente>", parts[..=6].join("<norm ")).into_bytes(),
        format!(
            "{}</dokumente>",
            [&parts[..1], &parts[20..24]].concat().join("<norm ")
        )
        .into_bytes(),
    ];
    // Hostile prologs: document types hidden behind comments, processing instructions and parameter entities
    // (the second round's entity bomb), so mutations reach the parser's DTD refusal from many sides.
    let mut seeds = seeds;
    let body = String::from_utf8(seeds[0].clone()).unwrap();
    let (head, rest) = body.split_once("<dokumente").unwrap();
    for prolog in [
        "<!DOCTYPE dokumente [<!-- <!ENTITY a \"x\"> --><!ENTITY b \"yyyyyyyy\">]>",
        "<!DOCTYPE dokumente [<?pi <!ENTITY a \"x\">?><!ENTITY % p \"<!ENTITY c 'z'>\"> %p;]>",
        "<!-- <!DOCTYPE x [<!ENTITY a \"x\">]> --><?x &a;?>",
    ] {
        seeds.push(
            format!(
                "{head}{prolog}<dokumente{}",
                rest.replacen("</P>", "&b;&c;</P>", 1)
            )
            .into_bytes(),
        );
    }
    let options = paragraf_corpus::ParseOptions::default();
    run("law XML", &seeds, Mutator::mutate, |input| {
        paragraf_corpus::parse_bytes(input, "fuzz.xml", &options).is_ok()
    });
}

/// Citation strings (`paragraf cite`, MCP `resolve_citation`) parsed and resolved against the real GG: refused
/// or resolved, never a panic, whatever the units, ranges and law names.
#[test]
fn citation_strings() {
    let law = paragraf_corpus::parse_file(&shared("corpus/GG.xml")).unwrap();
    let seeds: Vec<Vec<u8>> = [
        "Art. 1 Abs. 1 S. 2 GG",
        "Art. 20a GG",
        "Artikel 2 bis 19 GG",
        "§§ 535 bis 548 BGB",
        "Art. 5 Abs. 1 Satz 1 und Abs. 3 GG",
        "Art. 116 Absatz 1 des Grundgesetzes",
        "Art. 1 ff. GG",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    run("citation strings", &seeds, Mutator::mutate, |input| {
        let text = String::from_utf8_lossy(input);
        paragraf_core::cite::parse(&text)
            .and_then(|request| paragraf_core::cite::resolve(&law, &request))
            .is_ok()
    });
}

/// A tar of `(name, bytes)` entries, GNU headers (as the archive's), with a GNU long name for names over 100
/// bytes.
fn tar_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut tar = tar::Builder::new(Vec::new());
    for (name, bytes) in entries {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        tar.append_data(&mut header, name, *bytes).unwrap();
    }
    tar.into_inner().unwrap()
}

/// The federal archive reader (tar in xz, meta.json + source.xml per law, extension headers): mutations of the
/// tar, compressed again, so they reach the tar reader and not just the xz checksum.
#[test]
fn federal_archives() {
    let xml = std::fs::read_to_string(shared("corpus/GG.xml")).unwrap();
    let parts: Vec<&str> = xml.split("<norm ").collect();
    let law = format!("{}</dokumente>", parts[..=3].join("<norm "));
    let meta = br#"{"gii_slug": "gg", "jurabk": "GG"}"#;
    let long = format!("laws/BJNR000010949/{}/source.xml", "x".repeat(120));
    let seeds = vec![
        tar_of(&[
            ("laws/BJNR000010949/meta.json", meta),
            ("laws/BJNR000010949/source.xml", law.as_bytes()),
        ]),
        tar_of(&[(long.as_str(), law.as_bytes())]),
    ];
    let compress = |tar: &[u8]| {
        use std::io::Write;
        let mut xz = xz2::write::XzEncoder::new(Vec::new(), 0);
        xz.write_all(tar).unwrap();
        xz.finish().unwrap()
    };
    run_n(
        "federal archive (tar.xz)",
        INPUTS / 4,
        &seeds,
        |m, seed, donor| compress(&m.mutate(seed, donor)),
        |input| {
            let mut parsed = 0;
            let read = paragraf_corpus::archive::for_each_law_in(
                input,
                input.len() as u64,
                "fuzz.tar.xz",
                |law| {
                    parsed += usize::from(law.result.is_ok());
                    std::ops::ControlFlow::Continue(())
                },
            );
            read.is_ok() && parsed > 0
        },
    );
}

/// The download's zip reader (one law XML inside, ratio and size limits, then the parser).
#[test]
fn law_zips() {
    use std::io::Write;
    let xml = std::fs::read_to_string(shared("corpus/GG.xml")).unwrap();
    let parts: Vec<&str> = xml.split("<norm ").collect();
    let law = format!("{}</dokumente>", parts[..=3].join("<norm "));
    let seeds: Vec<Vec<u8>> = [
        zip::CompressionMethod::Stored,
        zip::CompressionMethod::Deflated,
    ]
    .into_iter()
    .map(|method| {
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        zip.start_file(
            "BJNR000010949.xml",
            zip::write::SimpleFileOptions::default().compression_method(method),
        )
        .unwrap();
        zip.write_all(law.as_bytes()).unwrap();
        zip.finish().unwrap().into_inner()
    })
    .collect();
    run("law zip", &seeds, Mutator::mutate, |input| {
        paragraf_corpus::fetch::law_from_zip(input.to_vec(), "fuzz", "gg").is_ok()
    });
}

/// The proxy's request bodies: UTF-8, JSON, the request's shape and the text limits.
#[test]
fn proxy_request_bodies() {
    let seeds: Vec<Vec<u8>> = [
        r#"{"text": "Kündigung der Wohnung wegen Eigenbedarf"}"#,
        r#"{"texts": ["Miete", "Kaution zurück", "§ 573 BGB"], "format": "int8"}"#,
        r#"{"text": "Urlaub", "model": "intfloat/multilingual-e5-small", "format": "f32"}"#,
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    let limits = paragraf_proxy::api::TextLimits {
        max_chars: 2_000,
        max_batch: 16,
    };
    run("proxy request body", &seeds, Mutator::mutate, |input| {
        paragraf_proxy::api::ValidRequest::parse(input, &limits).is_ok()
    });
}

/// A tiny but valid `E5S1` container (see `paragraf_embed::container` for the layout): two layers' worth of
/// header, a five-piece vocabulary, a normalisation entry and two tensors.
fn tiny_container() -> Vec<u8> {
    let mut out = paragraf_embed::container::MAGIC.to_vec();
    let u32s = |out: &mut Vec<u8>, values: &[u32]| {
        for v in values {
            out.extend_from_slice(&v.to_le_bytes());
        }
    };
    // version, hidden, layers, heads, ffn, vocab rows, positions, token types, eps, block
    u32s(&mut out, &[1, 32, 2, 2, 64, 8, 16, 1]);
    out.extend_from_slice(&1e-12f32.to_le_bytes());
    u32s(&mut out, &[32]);
    let pieces: [&[u8]; 5] = [b"<s>", b"</s>", b"<pad>", b"<unk>", b"\xe2\x96\x81Miete"];
    u32s(&mut out, &[pieces.len() as u32, 0, 1, 2, 3]);
    let blob: Vec<u8> = pieces.concat();
    out.extend_from_slice(&(blob.len() as u64).to_le_bytes());
    let mut offset = 0;
    u32s(&mut out, &[0]);
    for piece in pieces {
        offset += piece.len() as u32;
        u32s(&mut out, &[offset]);
    }
    for i in 0..pieces.len() {
        out.extend_from_slice(&(-(i as f32)).to_le_bytes());
    }
    out.extend_from_slice(&blob);
    // normalisation: one entry, U+00A0 -> U+0020 (4 + 1 + 4 bytes)
    u32s(&mut out, &[1, 9, 0xa0]);
    out.push(1);
    u32s(&mut out, &[0x20]);
    let tensors: [(&str, u8, u32); 2] = [("embeddings.word", 0, 8), ("layer.0.q", 1, 64)];
    u32s(&mut out, &[tensors.len() as u32]);
    let directory_len: usize = tensors
        .iter()
        .map(|(n, _, _)| 2 + n.len() + 1 + 4 + 8 + 8)
        .sum();
    let mut data_at = (out.len() + directory_len) as u64;
    let mut data = Vec::new();
    for (name, dtype, elements) in tensors {
        let bytes = if dtype == 0 {
            elements as u64 * 4
        } else {
            elements as u64 / 32 * 18
        };
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(name.as_bytes());
        out.push(dtype);
        u32s(&mut out, &[elements]);
        out.extend_from_slice(&data_at.to_le_bytes());
        out.extend_from_slice(&bytes.to_le_bytes());
        data_at += bytes;
        data.extend((0..bytes).map(|i| i as u8));
    }
    out.extend_from_slice(&data);
    out
}

#[test]
fn model_containers() {
    let seeds = vec![tiny_container()];
    let path = Path::new("fuzz.bin");
    paragraf_embed::container::Container::parse(path, seeds[0].clone())
        .expect("the seed container is valid");
    run("model container", &seeds, Mutator::mutate, |input| {
        paragraf_embed::container::Container::parse(path, input.to_vec()).is_ok()
    });
}

/// EmbeddingGemma's tokenizer reader (`tokenizer.json`: vocabulary, merges, added tokens), then encoding a
/// question with what it read.
#[test]
fn gemma_tokenizers() {
    let mut vocab: Vec<(String, u32)> = ["<pad>", "<eos>", "<bos>", "<unk>"]
        .iter()
        .enumerate()
        .map(|(i, t)| (t.to_string(), i as u32))
        .collect();
    vocab.extend((0..256).map(|b| (format!("<0x{b:02X}>"), 4 + b)));
    for piece in ["M", "i", "e", "t", "Mi", "et", "Miet", "▁", "▁Miete"] {
        vocab.push((piece.to_string(), vocab.len() as u32));
    }
    let json = serde_json::json!({
        "added_tokens": [
            {"id": 0, "content": "<pad>"}, {"id": 1, "content": "<eos>"}, {"id": 2, "content": "<bos>"},
            {"id": 3, "content": "<unk>"}
        ],
        "model": {
            "type": "BPE", "byte_fallback": true, "unk_token": "<unk>",
            "vocab": vocab.iter().cloned().collect::<std::collections::HashMap<String, u32>>(),
            "merges": [["M", "i"], ["e", "t"], ["Mi", "et"]]
        }
    });
    let seeds = vec![json.to_string().into_bytes()];
    paragraf_embed::gemma::bpe::Bpe::from_json(&seeds[0]).expect("the seed tokenizer is valid");
    run("Gemma tokenizer.json", &seeds, Mutator::mutate, |input| {
        match paragraf_embed::gemma::bpe::Bpe::from_json(input) {
            Ok(bpe) => {
                bpe.encode("Miete ä <bos> Mietet");
                true
            }
            Err(_) => false,
        }
    });
}

/// `paragraf mcp` fed mutated JSON-RPC messages (tools/call of every tool, initialize, list): one server under
/// the same address-space cap, which must answer a plain request after all of them.
#[test]
fn mcp_messages() {
    use std::io::{BufRead, BufReader, Write};
    let seeds: Vec<Vec<u8>> = [
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search_law","arguments":{"question":"Asylrecht","laws":["GG"],"k":3,"mode":"bm25"}}}"#,
        r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"get_section","arguments":{"law":"GG","designation":"Art. 1"}}}"#,
        r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"list_laws","arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"resolve_citation","arguments":{"citation":"Art. 1 Abs. 1 S. 2 GG"}}}"#,
        r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"table_of_contents","arguments":{"law":"GG"}}}"#,
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    let started = Instant::now();
    let mut child = std::process::Command::new("prlimit")
        .arg(format!("--as={MEMORY_CAP_BYTES}"))
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_paragraf"))
        .args(["mcp", "--bundles"])
        .arg(gg_bundles())
        .arg("--model")
        .arg(crate::util::model_path())
        .env(
            "PARAGRAF_EMBEDDING_CACHE",
            std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("embedding-cache"),
        )
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start paragraf mcp under prlimit");
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    // Answers are read (and dropped) alongside, so the server never blocks on a full pipe.
    let (answers, answered) = std::sync::mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            if line.contains("\"id\":424242") && answers.send(line).is_err() {
                return;
            }
        }
    });
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"fuzz","version":"1"}}}}}}"#).unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    let inputs = 2_000;
    let mut mutator = Mutator::new(SEED);
    for i in 0..inputs {
        let mut input = mutator.mutate(&seeds[i % seeds.len()], &seeds[(i + 1) % seeds.len()]);
        input.retain(|&b| b != b'\n');
        stdin.write_all(&input).unwrap();
        stdin.write_all(b"\n").unwrap();
    }
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":424242,"method":"tools/call","params":{{"name":"list_laws","arguments":{{}}}}}}"#).unwrap();
    stdin.flush().unwrap();
    let answer = answered.recv_timeout(std::time::Duration::from_secs(120));
    let alive = child.try_wait().unwrap().is_none();
    let _ = child.kill();
    let status = child.wait().unwrap();
    drop(stdin);
    let _ = reader.join();
    let answer = answer.unwrap_or_else(|_| {
        panic!("paragraf mcp did not answer after {inputs} mutated messages (alive: {alive}, {status})")
    });
    assert!(answer.contains("\"result\""), "{answer}");
    eprintln!(
        "fuzz MCP messages: {inputs} inputs (seed {SEED:#x}), then a plain request answered, {:.1} s (capped at {} GiB)",
        started.elapsed().as_secs_f64(),
        MEMORY_CAP_BYTES >> 30
    );
}
