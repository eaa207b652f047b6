"""A memory backend from outside the package, as another repository would write one: a RecordIndex on SQLite,
registered under the `amphoreus_graph.memory` entry-point group by site/outside_memory-0.1.dist-info (what
`pip install` would leave; a test puts site/ on sys.path), chosen with `--memory sqlite:///FILE`."""
