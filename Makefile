# spark-replica. `make help` lists the targets.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
# The SparkSession's jars (Iceberg, its S3 file IO, JDBC drivers), from Maven Central.
JARS   := $(VENV)/.jars-stamp
# The driver JVM's class archive: Spark's classes mapped at start instead of loaded.
ARCHIVE := $(VENV)/.class-archive-stamp
# The native core (Rust, built with cargo through maturin).
NATIVE := $(VENV)/.native-stamp

.PHONY: help install serve demo test test-fast soak lint types check bench bench-spark clean

help:  ## List the targets
	@awk 'BEGIN {FS = ":.*##"} /^[a-z-]+:.*##/ {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,bench,postgresql]'
	touch $(STAMP)

$(JARS): $(STAMP) tools/fetch_jars.py src/spark_replica/applier_core/storage/spark/jars.py
	$(BIN)/python tools/fetch_jars.py
	touch $(JARS)

$(NATIVE): $(STAMP) native/Cargo.toml native/Cargo.lock native/pyproject.toml native/spark_replica_native.pyi $(wildcard native/src/*.rs)
	$(BIN)/pip install --quiet ./native
	touch $(NATIVE)

$(ARCHIVE): $(JARS) $(NATIVE) tools/make_class_archive.py src/spark_replica/applier_core/storage/spark/class_archive.py
	$(BIN)/python tools/make_class_archive.py
	touch $(ARCHIVE)

install: $(ARCHIVE)  ## Create the virtualenv, install the project with its test tools, build the native core, fetch the jars, record the JVM's class archive

serve: $(ARCHIVE)  ## Run the replica server on 127.0.0.1:3307 (data in ./var)
	$(BIN)/spark-replica serve

demo: $(ARCHIVE)  ## A live source, a replica, CSA replication into Spark; Ctrl-C stops it
	$(BIN)/spark-replica demo

test: $(ARCHIVE)  ## Run every test (unit, wire with real clients, SQL scripts)
	$(BIN)/pytest -q

soak: $(ARCHIVE)  ## The reliability suite's long forms (kills, storms, fuzzing; about an hour)
	SPARK_REPLICA_SOAK=1 $(BIN)/pytest -q -m soak --timeout 7200

test-fast: $(JARS) $(NATIVE)  ## Run the tests that need no external client program
	$(BIN)/pytest -q -m "not clients and not spark"

lint: $(STAMP)  ## ruff check and ruff format --check; cargo fmt --check and clippy on the native core
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests
	cargo fmt --check --manifest-path native/Cargo.toml
	cargo clippy --quiet --release --manifest-path native/Cargo.toml -- -D warnings

types: $(NATIVE)  ## mypy (strict)
	$(BIN)/mypy

check: lint types test  ## lint + types + test

bench: $(ARCHIVE)  ## Every benchmark, then charts: JSON, text and PNG in docs/benchmarks (about an hour)
	$(BIN)/python tests/bench/suite.py

bench-spark: $(ARCHIVE)  ## Spark engine: flush path, queries on batches, CSA drain into Spark
	$(BIN)/python tests/bench/bench_spark_engine.py

clean:  ## Remove the virtualenv and caches
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
