"""Record fresh Codex sessions against a scripted local model (inside a loopback-only network
namespace) and check that the reader's reading of each rollout matches the run's ``exec --json`` stream.
See recorder.py for the safety rules and ``python -m corpus_tools.record --help`` for use."""
