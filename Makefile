# The two set-up commands of the README. Each creates its own virtual environment and installs
# with the constraints file, so that nothing has to be installed by hand.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt torch==2.13.0
STEPS ?= 1200
export MUJOCO_GL ?= egl
export SDL_VIDEODRIVER ?= dummy

.PHONY: demo demo-pendulum test test-ray tox-slice tox-all lint docs bench venv

$(PY):
	$(PYTHON) -m venv $(VENV)

## jax: the JAX plugin's envs, tested by `make test` (about 500 MB, most of it jaxlib)
venv: $(PY)
	$(PIP) -e ".[all,test,ray,jax]"

## The main job: Pong in EnvPool through hub, 8 envs: a progress bar, a summary and pong.gif
## (the 8 games tiled, in colour, with the step and each game's running return).
demo: venv
	$(VENV)/bin/hub rollout envpool:Pong-v5 --num-envs 8 --steps $(STEPS) --seed 0 -k render_mode=rgb_array --record pong.gif

## The same with the built-in pure-torch pendulum (no backend library).
demo-pendulum: venv
	$(VENV)/bin/hub rollout hub:Pendulum --num-envs 8 --steps $(STEPS) -k from_pixels=True --record pendulum.gif

## The tests (what .ci/run runs).
## The Ray tests (tests/plugins/hub_ray) run in their own step, test-ray.
RAY_TESTS := tests/plugins/hub_ray
test: venv
	$(PY) -m pytest -q -p no:cacheprovider --ignore=$(RAY_TESTS)
	$(MAKE) --no-print-directory test-ray

## The Ray tests, in a new network namespace that has only loopback: Ray advertises the
## machine's own address even when told 127.0.0.1; there it binds and advertises 127.0.0.1.
## (unshare -r: also as a user without root, where user namespaces are allowed.)
test-ray: venv
	unshare -rn sh -c 'ip link set lo up && exec $(PY) -m pytest -q -p no:cacheprovider $(RAY_TESTS)'

## A slice of the version matrix (what CI runs after the tests): the oldest supported version of
## each backend family (the newest run in `make test`), gymnasium 1.0's next-step-only vector
## envs, gym and gymnasium in one process; tox-all runs all of it (docs/compatibility.md).
## gym021 runs under xvfb-run (Debian package xvfb); torchrl runs the TorchRL consumer tests
## (tensordict 0.14, which TorchRL 0.14 needs); pettingzoo127 the PettingZoo plugin with the kit.
## The envs run one at a time and each is deleted after it ran (about 1-2 GB each, most of it
## torch), so the disk holds one at a time; TOX_KEEP=1 keeps them.
TOX_SLICE ?= minimal,gym021,gymnasium026,gymnasium10,both,envpool08,dmc-old,td014,torchrl,pettingzoo127
tox-slice: venv
	$(PIP) tox
	.ci/tox-each $(VENV)/bin/tox $(TOX_SLICE)

tox-all: venv
	$(PIP) tox
	.ci/tox-each $(VENV)/bin/tox $$($(VENV)/bin/tox -l | paste -sd, -)

lint: venv
	$(VENV)/bin/ruff check hub plugins tests benchmarks examples
	$(VENV)/bin/ruff format --check hub plugins tests benchmarks examples
	$(VENV)/bin/lint-imports --no-cache

## The docs site (mkdocs-material, API reference from the docstrings) into site/; a warning fails.
docs: venv
	$(PIP) -e ".[docs]"
	$(VENV)/bin/mkdocs build --strict --quiet

bench: venv
	$(PY) benchmarks/run_all.py
