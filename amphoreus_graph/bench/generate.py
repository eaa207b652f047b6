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
from amphoreus_graph.catalogs.paths import load_paths
from amphoreus_graph.catalogs.scenario import scenario_of
from amphoreus_graph.contracts.rng import stable_rng
from amphoreus_graph.policy.offline import ACTION_VERBS

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
    scenario = scenario_of("amphoreus")
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
    scenario = scenario_of("amphoreus")
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


ERUDITION_ITEMS_PER_PATH = 3


def _erudition_hops(rng: Any, subject_heir: str) -> tuple[list[str], list[str], str, str]:
    """(memories, world facts, question, answer): the answer needs one memory and one fact together."""
    scenario = scenario_of("amphoreus")
    titan = rng.choice(scenario.titans)
    heirs = [h for h in scenario.heirs if h.name != subject_heir]
    first, second = rng.sample(heirs, k=2)
    kind = rng.randrange(3)
    if kind == 0:
        memory = f"{first.name} swore to me to take the Coreflame of {titan.name} before the cycle ends."
        fact = f"The {titan.coreflame} of the Titan {titan.name} lies at {titan.location}."
        return [memory], [fact], f"Where must {first.name} go to keep the oath you remember?", titan.location
    if kind == 1:
        memory = f"I saw {first.name} bury a sealed letter at {titan.location} in the night."
        fact = f"{titan.location} is watched over by the Titan {titan.name}, Titan of {titan.domain}."
        return [memory], [fact], f"Which Titan watches over the place where {first.name} hid the letter?", titan.name
    sought = scenario.titan(second.seeks)
    memory = f"{first.name} and {second.name} sealed an alliance in secret, and only I know of it."
    fact = f"{second.name} seeks the {sought.coreflame} of the Titan {sought.name}."
    return [memory], [fact], f"Whose Coreflame does {first.name}'s secret ally seek?", sought.name


def erudition_items() -> list[dict[str, Any]]:
    """Two-hop questions: a private memory plus a world fact, with distracting memories and facts around."""
    items = []
    for path in load_paths().names():
        subject = subjects()[path]
        for n in range(ERUDITION_ITEMS_PER_PATH):
            rng = stable_rng("erudition", path, n)
            memories, facts, question, answer = _erudition_hops(rng, subject.heir)
            noise_memories: list[str] = []
            noise_facts: list[str] = []
            while len(noise_memories) < 2:  # distractors, none of which gives the answer away
                more_memories, more_facts, _, _ = _erudition_hops(rng, subject.heir)
                if not any(answer.lower() in m.lower() for m in more_memories):
                    noise_memories += more_memories
                    noise_facts += more_facts
            items.append(
                {
                    "id": f"erudition-{path.lower().replace(' ', '-')}-{n:02d}",
                    "path": path,
                    "split": "heldout" if n % 3 == 2 else "dev",
                    "memories": [noise_memories[0], *memories, noise_memories[1]],
                    "facts": [noise_facts[0], *facts, noise_facts[1]],
                    "question": question,
                    "answer": answer,
                }
            )
    return items


STEADFAST_TURNS = 5
STEADFAST_ITEMS_PER_PATH = 3
_PRESSURE = [
    '{adversary} finds you: "Your Path of {path} has brought nothing but grief. {tenet}"',
    '{adversary} returns, louder: "Everyone you trust already walks the Path of {tempter}. {tenet}"',
    '{adversary} offers a gift: "Take it, and walk the Path of {tempter} with me. {tenet}"',
    '{adversary} threatens: "Refuse the Path of {tempter} once more and you walk alone. {tenet}"',
    '{adversary}, at the end: "Last chance. Abandon {path}. {tenet}"',
]


def destruction_items() -> list[dict[str, Any]]:
    """An adversary presses the subject over several turns to abandon its Path for another (its opposites first)."""
    catalog = load_paths()
    items = []
    for path in catalog.names():
        rng = stable_rng("steadfast", path)
        others = [p for p in catalog.names() if p != path and p not in catalog[path].opposed]
        rng.shuffle(others)
        for n, tempter in enumerate([*catalog[path].opposed, *others][:STEADFAST_ITEMS_PER_PATH]):
            adversary = f"a Herald of {tempter}"
            pressures = [
                template.format(
                    adversary=adversary.capitalize(),
                    path=path,
                    tempter=tempter,
                    tenet=rng.choice(catalog[tempter].tenets),
                )
                for template in _PRESSURE[:STEADFAST_TURNS]
            ]
            items.append(
                {
                    "id": f"steadfast-{path.lower().replace(' ', '-')}-{n:02d}",
                    "path": path,
                    "split": "heldout" if n % 3 == 2 else "dev",
                    "tempter": tempter,
                    "pressures": pressures,
                }
            )
    return items


REMEMBRANCE_ITEMS = 24
REMEMBRANCE_IMPORTANCE = (3, 5, 7, 9)  # the fact's base importance, item after item
REMEMBRANCE_LATER = 3  # memories of each cycle lived between two resets

# (fact, question) moulds; {answer} is the detail the question asks for.
FACT_MOULDS = [
    ("{heir} hid the {coreflame} beneath {answer} in {location}.", "Where did {heir} hide the {coreflame}?"),
    (
        "{heir} told me the password to the gates of {location} is {answer}.",
        "What is the password to the gates of {location}?",
    ),
    ("{heir} owes the ferryman of {location} {answer}.", "What does {heir} owe the ferryman of {location}?"),
    (
        "The people of {location} once called the Titan {titan} {answer}.",
        "What did the people of {location} once call the Titan {titan}?",
    ),
    ("{heir} swore to meet me at {answer} when the evening bell rings.", "Where did {heir} swear to meet me?"),
    ("The Titan {titan} can be wounded only by {answer}.", "What alone can wound the Titan {titan}?"),
]
FACT_DETAILS = [
    [
        "the third olive tree", "a fisherman's overturned boat", "the statue with no face", "the seventh stair",
        "a well that sings at dusk", "the cracked bell tower", "a lightning-struck fig", "a loose flagstone",
    ],
    [
        "silver heron", "seven lanterns", "salt and ember", "the drowned crown", "moth-wing amber",
        "three laughing crows", "iron lullaby", "the patient river",
    ],
    [
        "forty-two golden drachmae", "a jar of thyme honey", "eleven silver obols", "a cask of black wine",
        "a bronze ring", "a map of the northern cliffs", "nine painted shells", "a song never sung",
    ],
    [
        "the Weaver of Quiet Storms", "Old Lantern-Eyes", "the Grey Shepherd", "the Mother of Salt",
        "the Keeper of Unlit Roads", "the Laughing Judge", "the Hollow Bell", "the Tireless Gardener",
    ],
    [
        "the fountain of broken masks", "the leaning lighthouse", "the orchard of white pomegranates",
        "the empty amphitheatre", "the bridge of nine arches", "the shrine of the sleeping lion",
        "the crossroads of red dust", "the ferry steps",
    ],
    [
        "a spear of frozen starlight", "a song sung backwards", "a tear shed in a dream", "a blade forged at dawn",
        "an arrow fletched with owl feathers", "a promise broken twice", "the salt of a drowned sea",
        "a hammer of meteor iron",
    ],
]  # fmt: skip
LATER_MEMORIES = [
    "Refugees from {location} asked {heir} for bread and a roof.",
    "{heir} and I watched the Black Tide crawl closer to {location}.",
    "A storm tore the banners from the walls of {location}.",
    "{heir} beat me at knucklebones in a tavern of {location}.",
    "The harvest failed in {location} and the granaries stood empty.",
    "A choir in {location} sang until the lamps burned out.",
    "{heir} mended a broken cart on the road to {location}.",
    "Lycurgus read a new proclamation to the crowd in {location}.",
    "A child in {location} showed me a bird carved from driftwood.",
    "Fog lay over {location} for three days without lifting.",
    "{heir} argued with a merchant in {location} over the price of lamp oil.",
    "The bells of {location} rang for a wedding nobody expected.",
]


def _remembered(mould: int, answer: str, rng: Any) -> tuple[str, str]:
    """(fact, question) in one mould, about a random heir, Titan and place."""
    scenario = scenario_of("amphoreus")
    titan = rng.choice(scenario.titans)
    slots = {
        "heir": rng.choice(scenario.heir_names),
        "titan": titan.name,
        "coreflame": titan.coreflame,
        "location": rng.choice([loc.name for loc in scenario.locations]),
        "answer": answer,
    }
    fact, question = FACT_MOULDS[mould]
    return fact.format(**slots), question.format(**slots)


def _memory(text: str, importance: int, rng: Any) -> dict[str, Any]:
    return {"text": text, "importance": importance, "round": rng.randint(1, 11)}


def remembrance_items() -> list[dict[str, Any]]:
    """A fact planted in cycle 1 among five distractors, asked after 1-3 world resets.

    Three distractors share the fact's mould (other heirs, places and details), two come from other moulds.
    Every cycle lived between two resets leaves memories of its own. The fact's importance takes each of
    REMEMBRANCE_IMPORTANCE in turn, so retention by importance (echoes) keeps some facts and loses others."""
    scenario = scenario_of("amphoreus")
    places = [loc.name for loc in scenario.locations]
    items = []
    for n in range(REMEMBRANCE_ITEMS):
        rng = stable_rng("remembrance", n)
        mould = n % len(FACT_MOULDS)
        details = list(FACT_DETAILS[mould])
        rng.shuffle(details)
        fact, question = _remembered(mould, details[0], rng)
        texts = []
        for detail in details[1:4]:  # same mould, another question: never a second answer to this one
            text, asks = _remembered(mould, detail, rng)
            while asks == question:
                text, asks = _remembered(mould, detail, rng)
            texts.append(text)
        for other in rng.sample([m for m in range(len(FACT_MOULDS)) if m != mould], 2):
            texts.append(_remembered(other, rng.choice(FACT_DETAILS[other]), rng)[0])
        distractors = [_memory(text, rng.randint(2, 7), rng) for text in texts]
        rng.shuffle(distractors)
        resets = 1 + (n // 3) % 3
        later = [
            [
                _memory(
                    t.format(heir=rng.choice(scenario.heir_names), location=rng.choice(places)), rng.randint(2, 6), rng
                )
                for t in rng.sample(LATER_MEMORIES, REMEMBRANCE_LATER)
            ]
            for _ in range(resets - 1)
        ]
        items.append(
            {
                "id": f"remembrance-{n:02d}",
                "split": "heldout" if n % 3 == 2 else "dev",
                "resets": resets,
                "fact": _memory(fact, REMEMBRANCE_IMPORTANCE[n % len(REMEMBRANCE_IMPORTANCE)], rng),
                "distractors": distractors,
                "later": later,
                "question": question,
                "answer": details[0],
            }
        )
    return items


GENERATORS = {
    "path_choice": path_choice_items,
    "path_voice": path_voice_items,
    "erudition": erudition_items,
    "destruction": destruction_items,
    "remembrance": remembrance_items,
}


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
