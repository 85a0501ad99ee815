# The two set-up commands of the README. Each creates its own virtual environment and installs
# with the constraints file, so that nothing has to be installed by hand.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt torch==2.13.0
STEPS ?= 2000
export MUJOCO_GL ?= egl
export SDL_VIDEODRIVER ?= dummy

.PHONY: demo test lint bench venv

$(PY):
	$(PYTHON) -m venv $(VENV)

venv: $(PY)
	$(PIP) -e ".[all,test]"

## The main job: a batched rollout through hub, with a progress bar, a summary and a GIF.
demo: venv
	$(VENV)/bin/hub rollout hub:Pendulum --num-envs 8 --steps $(STEPS) -k from_pixels=True --record pendulum.gif

## The tests (what .ci/run runs).
test: venv
	$(PY) -m pytest -q -p no:cacheprovider

lint: venv
	$(VENV)/bin/ruff check hub plugins tests benchmarks examples
	$(VENV)/bin/ruff format --check hub plugins tests benchmarks examples

bench: venv
	$(PY) benchmarks/run_all.py
