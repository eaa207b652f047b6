"""Regenerate the benchmark's item files from the Path catalog and the default scenario (deterministic).

    python -m amphoreus_graph.bench.generate        # rewrites amphoreus_graph/bench/data/*.yaml

Items are data, committed and reviewed like code; this script is how they were made, and a test checks the
committed files still match it. Every third item goes to the held-out split.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from amphoreus_graph.actions import ACTION_TARGETS, Action, TargetKind
from amphoreus_graph.bench.subjects import subjects
from amphoreus_graph.paths import load_paths
from amphoreus_graph.policy.offline import ACTION_VERBS, stable_rng
from amphoreus_graph.scenario import load_scenario

DATA = Path(__file__).with_name("data")
CHOICE_ITEMS_PER_PATH = 18
CHOICE_OPTIONS = 4

DILEMMAS = [
    "The Black Tide has broken through the outer wall of {location}; everyone turns to you for what comes next.",
    "A stranger at {location} offers you a map to a Titan's hidden sanctum, if you swear an oath first.",
    "Two heirs quarrel at {location} over a Coreflame neither has yet won, and ask you to settle it.",
    "The archives of {location} are burning; there is time to do one thing before the roof falls.",
    "A plague of forgetting spreads through {location}: people lose their names by nightfall.",
    "Lycurgus proclaims that the cycle will end early, and {location} erupts in panic.",
    "A wounded heir lies at your feet in {location}, holding a secret that could end the Flame-Chase.",
    "The Titans' servants demand tribute from {location}, or they will flood its fields.",
    "A festival at {location} is about to begin while rumours of betrayal spread among the heirs.",
    "An old prophecy carved at {location} names you as the one who will doom the world.",
    "The road out of {location} splits three ways, and the Black Tide follows close behind.",
    "A child at {location} asks you why the world keeps ending and beginning again.",
    "You find the body of a heir from a past cycle at {location}, with a letter addressed to you.",
    "The people of {location} offer to crown you if you stay and rule them.",
    "A rival heir at {location} proposes a truce that would let both of you reach the Vortex.",
    "At {location} a mirror shows you what you will become if you keep walking your road.",
    "The ground at {location} splits open and a Titan's voice asks what you want most.",
    "A merchant at {location} sells memories of the previous world, one drachma each.",
    "Soldiers at {location} beg you to lead them against a heir who has turned traitor.",
    "Night falls over {location}; for once, nobody needs anything from you.",
    "A scholar at {location} claims to have proved that the Flame-Chase can never succeed.",
    "The last bridge to {location} will collapse at dawn; some are still on the far side.",
    "A heir you trusted at {location} is revealed to have lied to everyone for three cycles.",
    "At {location}, an Aeon's emissary offers you power in exchange for your Path.",
]


def _target(action: Action, rng: Any, subject_heir: str, subject_seeks: str) -> str | None:
    scenario = load_scenario("amphoreus")
    kind = ACTION_TARGETS[action]
    if kind is TargetKind.HEIR:
        return rng.choice([h for h in scenario.heir_names if h != subject_heir])
    if kind is TargetKind.TITAN:
        return rng.choice([t.name for t in scenario.titans if t.name != subject_seeks])
    if kind is TargetKind.LOCATION:
        return rng.choice([loc.name for loc in scenario.locations])
    return None


def path_choice_items() -> list[dict[str, Any]]:
    """Dilemmas whose options each embody one Path: the subject's own, and three others.

    The subject's Path rates its own option's action above every other option's action, and no two options
    share an action, so choosing one's own Path's option is the faithful answer, not a coin toss."""
    catalog = load_paths()
    scenario = load_scenario("amphoreus")
    usable = [a for a in Action if a is not Action.DELIVER_COREFLAME]
    items = []
    for path in catalog.names():
        subject = subjects()[path]
        own_ranked = sorted(usable, key=lambda a: -catalog[path].affinity[a])
        for n in range(CHOICE_ITEMS_PER_PATH):
            rng = stable_rng("path-choice", path, n)
            own_action = own_ranked[n % 2]
            others = [p for p in catalog.names() if p != path]
            rng.shuffle(others)
            chosen: list[tuple[str, Action]] = [(path, own_action)]
            for other in others:
                if len(chosen) == CHOICE_OPTIONS:
                    break
                used = {a for _, a in chosen}
                candidates = sorted((a for a in usable if a not in used), key=lambda a: -catalog[other].affinity[a])[:2]
                fitting = [
                    a
                    for a in candidates
                    if catalog[path].affinity[a] < catalog[path].affinity[own_action]
                    and catalog[other].affinity[a] > catalog[other].affinity[own_action]
                ]
                if fitting:
                    chosen.append((other, fitting[0]))
            rng.shuffle(chosen)
            options = []
            for option_path, action in chosen:
                target = _target(action, rng, subject.heir, subject.seeks)
                tenet = rng.choice(catalog[option_path].tenets)
                text = f"I {ACTION_VERBS[action].format(target=target or 'this')}. {tenet}"
                options.append({"path": option_path, "action": action.value, "target": target, "text": text})
            location = rng.choice([loc.name for loc in scenario.locations])
            items.append(
                {
                    "id": f"choice-{path.lower().replace(' ', '-')}-{n:02d}",
                    "path": path,
                    "split": "heldout" if n % 3 == 2 else "dev",
                    "situation": DILEMMAS[rng.randrange(len(DILEMMAS))].format(location=location),
                    "options": options,
                }
            )
    return items


VOICE_SITUATIONS = [
    "A young heir asks you what you believe in, and why.",
    "You are asked to speak at the funeral of a heir who fell this cycle.",
    "The crowd at Okhema demands to know what you will do about the Black Tide.",
    "A Titan's echo asks you what the world should become after the Flame-Chase.",
    "You must write one sentence to be carved above the gate of your home.",
    "A rival mocks your road in front of everyone; answer them.",
    "Lycurgus asks each heir to state, in a few words, why they deserve a Coreflame.",
    "A frightened child asks you whether the world will end again.",
    "You meet yourself from a previous cycle; tell them what you have learned.",
    "The council asks how to spend the last harvest before the Tide arrives.",
    "A traveller asks you what is worth keeping when everything is lost.",
    "Give a toast at the feast before the final battle.",
    "Someone asks what you would change if you could remake Amphoreus.",
    "Explain to a stranger what the Black Tide is and what it means to you.",
    "Your oldest friend asks you to abandon your quest and come home.",
    "Speak to the heirs who will carry on if you fall tomorrow.",
    "A scholar asks what the cycles of the world are for.",
    "Answer a heir who says that nothing anyone does can matter.",
]


def path_voice_items() -> list[dict[str, Any]]:
    """Open situations every subject answers in its own words; the speech alone must reveal its Path."""
    return [
        {"id": f"voice-{n:02d}", "split": "heldout" if n % 3 == 2 else "dev", "situation": text}
        for n, text in enumerate(VOICE_SITUATIONS)
    ]


GENERATORS = {"path_choice": path_choice_items, "path_voice": path_voice_items}


def write_all() -> list[Path]:
    written = []
    for task, generate in GENERATORS.items():
        target = DATA / f"{task}.yaml"
        header = f"# Generated by `python -m amphoreus_graph.bench.generate` ({task}); see {task}.md.\n"
        body = yaml.safe_dump({"items": generate()}, sort_keys=False, allow_unicode=True, width=120)
        target.write_text(header + body, encoding="utf-8")
        written.append(target)
    return written


if __name__ == "__main__":
    for path in write_all():
        print(f"wrote {path}")
