"""The model layer: how every other layer asks a model. Chat models behind one gateway (chat.py, gateway.py) with
the response cache, the call log, the endpoints' limiters, native structured output and the transport that sends
a request; the sentence embedder (embedder.py, onnx_encoder.py). It stands on contracts/ and errors alone, below
memory, policy and worlds, so each of them may ask a model without importing another (docs/architecture.md)."""
