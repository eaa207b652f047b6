"""The kit's social building blocks: feeds (post, reply, repost, like; what each agent perceives of them), votes on
motions agents propose in their own words, and trade offers a counterparty accepts in a later round.

Everything an agent can aim at here is an *item* with an id (`#12`), listed in its perception; the round's
effects come here through `Round` (rules.py), and the state stays bounded: posts leave it once no feed can
show them, offers once they are settled, so a society's checkpoint does not grow with its history.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from amphoreus_graph.worlds.kit.state import KitState, Motion, Offer, Post
from amphoreus_graph.worlds.kit.texts import fmt, num

if TYPE_CHECKING:
    from amphoreus_graph.worlds.kit.effects import PostArgs
    from amphoreus_graph.worlds.kit.rules import Round, _Ctx
    from amphoreus_graph.worlds.kit.schema import FeedSpec, KitSpec

# ------------------------------------------------------------------------------------------------- feeds


def feed(spec: FeedSpec, state: KitState, agent: str) -> list[Post]:
    """The posts an agent perceives now: by those it follows (everyone's, without a follows relation), and
    replies to its own posts, made within the window, ranked, at most `size`."""
    return state.derived(f"feeds {id(spec)}", lambda: Feeds(spec, state)).of(agent)


class Feeds:
    """The posts of one state a feed can show, ranked once and found by author and by whom they reply to, so
    that each agent's feed costs the posts it could be shown, not every post of the society."""

    def __init__(self, spec: FeedSpec, state: KitState) -> None:
        self.spec, self.state = spec, state
        recent = [p for p in state.posts if state.round - p.round <= spec.window]
        self.ranked = sorted(recent, key=self._rank)
        self.by_author: dict[str, list[Post]] = {}
        for p in self.ranked:
            self.by_author.setdefault(p.author, []).append(p)
        author = {p.id: p.author for p in state.posts}
        self.replies_to: dict[str, list[Post]] = {}  # an author -> recent replies to their posts
        for p in self.ranked:
            if p.reply_to is not None and p.reply_to in author:
                self.replies_to.setdefault(author[p.reply_to], []).append(p)

    def _rank(self, post: Post) -> tuple[int, ...]:
        if self.spec.rank == "popular":
            return (-post.popularity, -post.round, -_number(post.id))
        return (-post.round, -_number(post.id))

    def of(self, agent: str) -> list[Post]:
        spec = self.spec
        if spec.follows is None:
            shown = (p for p in self.ranked if p.author != agent or spec.own)
            return list(itertools.islice(shown, spec.size))
        row = self.state.relations.get(spec.follows, {}).get(agent, {})
        authors = [other for other, v in row.items() if v > 0 and other != agent]
        if spec.own:
            authors.append(agent)
        found = {p.id: p for a in authors for p in self.by_author.get(a, ())}
        found |= {p.id: p for p in self.replies_to.get(agent, ()) if p.author != agent or spec.own}
        return sorted(found.values(), key=self._rank)[: spec.size]


def _number(item_id: str) -> int:
    return int(item_id.lstrip("#"))


def post_line(post: Post, now: int) -> str:
    ago = now - post.round
    when = "this round" if ago <= 0 else "last round" if ago == 1 else f"{ago} rounds ago"
    counts = [f"{len(post.likes)} like{'s' * (len(post.likes) != 1)}"] if post.likes else []
    counts += [f"{post.reposts} repost{'s' * (post.reposts != 1)}"] if post.reposts else []
    how = (
        f"replying to {post.reply_to}, " if post.reply_to else f"reposting {post.repost_of}, " if post.repost_of else ""
    )
    return f'{post.id} {post.author} ({how}{when}{", " if counts else ""}{", ".join(counts)}): "{post.text}"'


def mark_reach(spec: KitSpec, state: KitState, agents: list[str]) -> None:
    """Count, per topic, the agents a post of it has reached: those whose feed shows one now, and its authors."""
    if spec.feed is None or not spec.feed.topics:
        return
    feeds = Feeds(spec.feed, state)  # `reached`, all this changes, is no part of what a feed shows
    for agent in agents:
        for post in feeds.of(agent):
            if post.topic is not None and agent not in state.reached.get(post.topic, []):
                state.reached.setdefault(post.topic, []).append(agent)


def seed_posts(spec: KitSpec, state: KitState) -> None:
    """The posts a cycle begins with, written in round 0 (and their authors reached by what they wrote)."""
    if spec.feed is None:
        return
    for seed in spec.feed.seeds:
        state.posts.append(Post(id=state.new_id(), author=seed.author, text=seed.text, round=0, topic=seed.topic))
        if seed.topic is not None and seed.author not in state.reached.get(seed.topic, []):
            state.reached.setdefault(seed.topic, []).append(seed.author)


# ------------------------------------------------------------------------------------------------- items


def item_targets(kind: str, spec: KitSpec, state: KitState, agent: str) -> list[str]:
    """The items of a kind an agent may act on now: posts in its feed, open motions it has not voted on,
    open offers made to it."""
    if kind == "post":
        return [p.id for p in feed(spec.feed, state, agent)] if spec.feed is not None else []
    if kind == "motion":
        return [m.id for m, voters in state.derived("ballots", lambda: _ballots(state)) if agent not in voters]
    return [o.id for o in _offers(state).get(agent, ()) if o.to == agent and o.round < state.round]


def _ballots(state: KitState) -> list[tuple[Motion, set[str]]]:
    """The open motions, each with who has voted on it."""
    return [(m, {*m.ayes, *m.nays}) for m in state.motions if m.outcome is None]


def _offers(state: KitState) -> dict[str, list[Offer]]:
    """The open offers by party: each agent's, made by it or to it, in the order they were made."""

    def build() -> dict[str, list[Offer]]:
        found: dict[str, list[Offer]] = {}
        for o in state.offers:
            if o.status == "open":
                for party in dict.fromkeys((o.by, o.to)):
                    found.setdefault(party, []).append(o)
        return found

    return state.derived("offers", build)


def perceived(spec: KitSpec, state: KitState, agent: str) -> list[str]:
    """What an agent perceives of the feed, the motions and the offers, one line each."""
    lines = []
    if spec.feed is not None:
        shown = feed(spec.feed, state, agent)
        lines.append("Your feed:" if shown else "Your feed is quiet.")
        lines += [post_line(p, state.round) for p in shown]
    lines += state.derived("motion lines", lambda: _motion_lines(state))
    for o in _offers(state).get(agent, ()):
        terms = f"{_goods(spec, o.give)} for {_goods(spec, o.get)}"
        who = f"{o.by} offers you" if o.to == agent else f"You offered {o.to}"
        lines.append(f"Offer {o.id}: {who} {terms}.")
    return lines


def _motion_lines(state: KitState) -> list[str]:
    """The open motions as every agent perceives them, one line each."""
    lines = []
    for m in state.motions:
        if m.outcome is None:
            tally = f"{len(m.ayes)} aye{'s' * (len(m.ayes) != 1)}, {len(m.nays)} nay{'s' * (len(m.nays) != 1)}"
            lines.append(f'Motion {m.id} by {m.author}, open until round {m.closes} ({tally}): "{m.text}"')
    return lines


def _goods(spec: KitSpec, amounts: dict[str, float]) -> str:
    """What changes hands, in the world's words: "1 sack of grain and 4 coin"."""
    return " and ".join(f"{num(v)} {spec.stats[stat].label or stat}" for stat, v in amounts.items())


# ------------------------------------------------------------------------------------------ in the round


def written(r: Round, ctx: _Ctx, args: PostArgs | None) -> str:
    """A post's (or a motion's) words: its template, else the agent's own text (a text target), else its
    speech."""
    if args is not None and args.text is not None:
        return fmt(args.text, ctx.values | r.w.stakes_vars(r.s, args.text))
    target = ctx.decision.target if ctx.decl.target.value == "text" else None
    return (target or ctx.decision.speech or "").strip()


def post(r: Round, ctx: _Ctx, args: PostArgs, *, reply_to: Post | None = None) -> None:
    text = written(r, ctx, args)
    if not text:
        ctx.sentences.append(f"{ctx.actor} had nothing to say.")
        return
    topic = args.topic or (reply_to.topic if reply_to is not None else None)
    made = Post(
        id=r.s.new_id(),
        author=ctx.actor,
        text=text,
        round=r.s.round,
        topic=topic,
        reply_to=reply_to.id if reply_to else None,
    )
    r.s.posts.append(made)
    if topic is not None and ctx.actor not in r.s.reached.get(topic, []):
        r.s.reached.setdefault(topic, []).append(ctx.actor)  # who writes about it has it
    ctx.values["item"] = made.id
    if reply_to is not None:
        _involve(ctx, reply_to.author)
        ctx.sentences.append(f'{ctx.actor} replied to {reply_to.author}\'s post {reply_to.id}: "{text}"')
    else:
        ctx.sentences.append(f'{ctx.actor} posted {made.id}: "{text}"')


def _target_post(r: Round, ctx: _Ctx) -> Post | None:
    return next((p for p in r.s.posts if p.id == ctx.decision.target), None)


def _involve(ctx: _Ctx, agent: str) -> None:
    if agent not in ctx.involved:
        ctx.involved.append(agent)


def reply(r: Round, ctx: _Ctx, args: PostArgs) -> None:
    original = _target_post(r, ctx)
    if original is not None:
        post(r, ctx, args, reply_to=original)


def repost(r: Round, ctx: _Ctx) -> None:
    original = _target_post(r, ctx)
    if original is None:
        return
    original.reposts += 1
    source = original.repost_of or original.id
    r.s.posts.append(
        Post(
            id=r.s.new_id(),
            author=ctx.actor,
            text=original.text,
            round=r.s.round,
            topic=original.topic,
            repost_of=source,
        )
    )
    _involve(ctx, original.author)
    ctx.sentences.append(f"{ctx.actor} reposted {original.author}'s post {original.id}.")


def like(r: Round, ctx: _Ctx) -> None:
    original = _target_post(r, ctx)
    if original is None or ctx.actor in original.likes:
        return
    original.likes.append(ctx.actor)
    _involve(ctx, original.author)
    ctx.sentences.append(f"{ctx.actor} liked {original.author}'s post {original.id}.")


def propose(r: Round, ctx: _Ctx) -> None:
    votes = r.w.spec.votes
    assert votes is not None  # checked at load
    text = written(r, ctx, None)
    if not text:
        ctx.sentences.append(f"{ctx.actor} proposed nothing.")
        return
    closes = r.s.round + votes.open_for
    if votes.deadline is not None:
        closes = min(closes, max(votes.deadline, r.s.round + 1))
    motion = Motion(id=r.s.new_id(), author=ctx.actor, text=text, round=r.s.round, closes=closes)
    r.s.motions.append(motion)
    ctx.public = True
    ctx.sentences.append(f'{ctx.actor} proposed motion {motion.id}, open until round {closes}: "{text}"')


def vote(r: Round, ctx: _Ctx, side: str) -> None:
    motion = next((m for m in r.s.motions if m.id == ctx.decision.target and m.outcome is None), None)
    if motion is None or ctx.actor in motion.ayes + motion.nays:
        return
    (motion.ayes if side == "aye" else motion.nays).append(ctx.actor)
    ctx.sentences.append(f"{ctx.actor} voted {side} on motion {motion.id}.")


def close_motions(r: Round) -> None:
    """Motions whose deadline is this round are decided: quorum, then majority; the outcome's effects apply."""
    votes = r.w.spec.votes
    if votes is None:
        return
    for motion in r.s.motions:
        if motion.outcome is not None or motion.closes > r.s.round:
            continue
        ballots = len(motion.ayes) + len(motion.nays)
        passed = ballots >= votes.quorum and len(motion.ayes) > votes.majority * ballots
        motion.outcome = "passed" if passed else "failed"
        outcome = votes.passed if passed else votes.failed
        ctx = r.world_ctx()
        r.run_effects(ctx, outcome.effects)
        values = r.w.stakes_vars(r.s) | {
            "motion": motion.id,
            "text": motion.text,
            "author": motion.author,
            "ayes": len(motion.ayes),
            "nays": len(motion.nays),
        }
        default = f'Motion {motion.id} ("{motion.text}") {motion.outcome}, {len(motion.ayes)} to {len(motion.nays)}.'
        text = " ".join([fmt(outcome.text, values) if outcome.text else default, *ctx.sentences])
        r.file("", text, location=None, involved=[], public=True, importance=6.0 + ctx.bump)


def offer(r: Round, ctx: _Ctx, give: dict[str, float], get: dict[str, float]) -> None:
    """An offer to the target; a standing offer from the target with the same terms the other way round is
    taken up at once (both agreed in the same round)."""
    if ctx.target is None:
        return
    match = next(
        (
            o
            for o in r.s.offers
            if o.status == "open" and o.by == ctx.target and o.to == ctx.actor and o.give == get and o.get == give
        ),
        None,
    )
    if match is not None:
        _settle(r, ctx, match)
        return
    made = Offer(id=r.s.new_id(), by=ctx.actor, to=ctx.target, give=give, get=get, round=r.s.round)
    r.s.offers.append(made)
    ctx.sentences.append(
        f"{ctx.actor} offered {ctx.target} {_goods(r.w.spec, give)} for {_goods(r.w.spec, get)} ({made.id})."
    )


def accept(r: Round, ctx: _Ctx) -> None:
    found = next((o for o in r.s.offers if o.id == ctx.decision.target and o.status == "open"), None)
    if found is not None:
        _settle(r, ctx, found)


def decline(r: Round, ctx: _Ctx) -> None:
    found = next((o for o in r.s.offers if o.id == ctx.decision.target and o.status == "open"), None)
    if found is not None:
        found.status = "declined"
        _involve(ctx, found.by)
        ctx.sentences.append(f"{ctx.actor} declined {found.by}'s offer {found.id}.")


def _settle(r: Round, ctx: _Ctx, deal: Offer) -> None:
    """Both sides hand over what they agreed, or, if either cannot, nothing moves and the offer fails."""
    _involve(ctx, deal.by)
    short = _short(r, deal.by, deal.give) or _short(r, ctx.actor, deal.get)
    if short:
        deal.status = "failed"
        ctx.sentences.append(f"The trade {deal.id} between {deal.by} and {ctx.actor} fell through: {short}.")
        return
    for giver, taker, amounts in ((deal.by, ctx.actor, deal.give), (ctx.actor, deal.by, deal.get)):
        for stat, amount in amounts.items():
            r.set_stat(giver, stat, r.s.agents[giver].stats[stat] - amount)
            r.set_stat(taker, stat, r.s.agents[taker].stats[stat] + amount)
    deal.status = "accepted"
    gave, got = _goods(r.w.spec, deal.give), _goods(r.w.spec, deal.get)
    ctx.sentences.append(f"{ctx.actor} and {deal.by} traded: {deal.by} gave {gave} for {got} ({deal.id}).")


def _short(r: Round, agent: str, amounts: dict[str, float]) -> str:
    """What an agent cannot hand over (or the other cannot hold), in words; "" if it can."""
    for stat, amount in amounts.items():
        spec = r.w.spec.stats[stat]
        if r.s.agents[agent].stats[stat] - spec.min < amount - 1e-9:
            return f"{agent} had not {num(amount)} {spec.label or stat}"
    return ""


def tidy(r: Round) -> None:
    """End of round: offers past their time expire, settled ones leave the state, and posts no feed can show
    any more leave it too."""
    trade = r.w.spec.trade
    if trade is not None:
        for o in r.s.offers:
            if o.status == "open" and r.s.round - o.round >= trade.open_for + (1 if trade.open_for else 0):
                o.status = "expired"
        r.s.offers = [o for o in r.s.offers if o.status == "open"]
    if r.w.spec.feed is not None:
        window = r.w.spec.feed.window
        r.s.posts = [p for p in r.s.posts if r.s.round + 1 - p.round <= window]
