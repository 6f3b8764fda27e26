"""The lift a Crazyflie loses 0.2 to 0.5 m under another, against Neural-Swarm's measurements.

Shi, Hönig, Yue and Chung, "Neural-Swarm" (ICRA 2020, arXiv 2003.02992), Fig. 3: the vertical interaction
force on a Crazyflie 2.0 (34 g with its markers and deck) hovering under another, against the vertical
distance. As a public simulator's source transcribes that figure (a code comment of a swarm repository:
"0.5 m, force = 4 grams; 0.4 m, 6 grams; 0.3 m, 8 grams; 0.2 m, 10 grams"), the force is about 10, 8, 6 and 4
grams-force at 0.2, 0.3, 0.4 and 0.5 m. We could not read the figure itself here; these are that transcription.

The model's figure: the lift lost at the hover speed (kT ω² = 0.0661949 N a rotor: the lower vehicle's command
before its controller reacts) under the Crazyflie source (0.2647796 N, our 27 g Crazyflie), four rotors, in
grams-force (/ 9.80665 m/s²), worked by hand like tests/downwash/test_jet.py's 0.3 m:
  0.2 m: w = 4.7651583 m/s, 4 × 0.0239644 N = 9.77 g (36.2 % of the weight);
  0.3 m: w = 4.1653762 m/s, 4 × 0.0203407 N = 8.30 g (30.7 %);
  0.4 m: w = 3.6447376 m/s, 4 × 0.0173339 N = 7.07 g (26.2 %);
  0.5 m: w = 3.3156935 m/s, 4 × 0.0155014 N = 6.32 g (23.4 %).
Against the transcription in grams-force: 0.98, 1.04, 1.18 and 1.58 times. The measured vehicles weighed 34 g;
as fractions of their weight (29, 24, 18 and 12 %; the model's fraction does not depend on the weight, both
the jet and the lower rotor's v_h scale with √T) the model gives 1.25, 1.3, 1.5 and 2.0 times: it falls off
with distance more slowly than the measurement.
"""

from __future__ import annotations

import pytest

from tests.downwash.test_jet import under_the_source

#: Neural-Swarm's Fig. 3, as transcribed (see the module): grams-force lost by the lower Crazyflie.
MEASURED = {0.2: 10.0, 0.3: 8.0, 0.4: 6.0, 0.5: 4.0}
MODEL = {0.2: 9.77, 0.3: 8.30, 0.4: 7.07, 0.5: 6.32}


@pytest.mark.parametrize("below", sorted(MODEL))
def test_the_lift_lost_under_a_crazyflie_is_the_hand_figure(below):
    _, change = under_the_source(0.0, below)
    grams = -change.sum() / 9.80665 * 1000.0
    assert grams == pytest.approx(MODEL[below], abs=0.01)


@pytest.mark.parametrize("below", sorted(MODEL))
def test_the_lift_lost_is_within_the_stated_factor_of_neural_swarms(below):
    _, change = under_the_source(0.0, below)
    grams = -change.sum() / 9.80665 * 1000.0
    # Within 20 % from 0.2 to 0.4 m, 60 % at 0.5 m (grams-force, as the figure gives them).
    assert grams / MEASURED[below] == pytest.approx(1.0, abs=0.2 if below < 0.45 else 0.6)
