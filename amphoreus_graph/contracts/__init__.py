"""The floor every other layer stands on: the shapes that cross layers (a turn, a decision, a memory event, a
world and its actions) and the small helpers everything shares. It imports nothing else of amphoreus_graph."""
