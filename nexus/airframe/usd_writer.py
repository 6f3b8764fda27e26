"""An :class:`~nexus.airframe.sizing.Airframe` and its gains as a vehicle file, laid out as
``vehicles/astro_max_base.usda`` (docs/vehicles.md, "Prim layout"): a base body with its colliders,
visual arms and sensors, one rigid body, revolute joint, ESC and propeller per rotor, the truth
estimator and the PID controller. Every number is written with 7 significant digits (float32)."""

from __future__ import annotations

import math

from nexus.airframe.gains import Gains
from nexus.airframe.sizing import Airframe


def _n(value: float) -> str:
    text = f"{float(value):.7g}"
    return "0" if text in ("-0", "0") else text


def _v(values) -> str:
    return "(" + ", ".join(_n(v) for v in values) + ")"


def _spin_words(spin: int) -> str:
    return "counter-clockwise" if spin > 0 else "clockwise"


_SENSORS = {
    "imu": '''            def Scope "Imu" (
                prepend apiSchemas = ["NexusImuAPI"]
                doc = "Autopilot IMU in the hub."
            )
            {{
                float nexus:rate = 250
                bool nexus:noise = 1
                float3 nexus:mountOffset = {imu}
                float nexus:gyroNoiseSigma = 0.0008726646
                float nexus:accelNoiseSigma = 0.00637
                float3 nexus:gyroBiasRandomWalk = (3.8785e-05, 3.8785e-05, 3.8785e-05)
                float3 nexus:accelBiasRandomWalk = (0.006, 0.006, 0.006)
            }}
''',
    "mag": '''            def Scope "Mag" (
                prepend apiSchemas = ["NexusMagnetometerAPI"]
                doc = "Magnetometer in the GNSS puck."
            )
            {{
                float nexus:rate = 100
                bool nexus:noise = 1
                float3 nexus:mountOffset = {puck}
            }}
''',
    "baro": '''            def Scope "Baro" (
                prepend apiSchemas = ["NexusBarometerAPI"]
                doc = "Autopilot barometer in the hub."
            )
            {{
                float nexus:rate = 50
                bool nexus:noise = 1
                float3 nexus:mountOffset = {imu}
                float nexus:noiseSigma = 3
                float nexus:driftRandomWalk = 0.005
            }}
''',
    "gps": '''            def Scope "Gps" (
                prepend apiSchemas = ["NexusGpsAPI"]
                doc = "GNSS antenna on top of the hub."
            )
            {{
                float nexus:rate = 10
                bool nexus:noise = 1
                float3 nexus:mountOffset = {puck}
            }}
''',
}


def _px4_metadata(px4: dict) -> str:
    if not px4:
        return ""
    lines = []
    for key, value in px4.items():
        kind = "int" if isinstance(value, int) and not isinstance(value, bool) else "double"
        lines.append(f"            {kind} {key} = {value if kind == 'int' else _n(value)}")
    body = "\n".join(lines)
    return f"""    customData = {{
        dictionary px4Parameters = {{
{body}
        }}
    }}
"""


def vehicle_text(airframe: Airframe, gains: Gains, command: str) -> str:
    """The vehicle file's text; ``command`` is how it was made (written into its doc)."""
    a = airframe
    n = len(a.rotors)
    length, width, height = a.box
    bar = max(a.arm / 25, 0.003)  # arm and skid cross-section [m]
    skid_z = -a.gear_height + bar / 2
    skid_y = width / 2 + bar
    imu = (0.0, 0.0, height / 4)
    puck = (-length / 4, 0.0, height / 2 + bar)
    bell = max(a.diameter / 14, 0.002)
    out = [f'''#usda 1.0
(
    defaultPrim = "vehicle"
    doc = """{a.doc or a.name}: {n} rotors, {a.frame}, {_n(a.mass)} kg; PX4 motor order.
    Written by `{command}` (nexus/airframe); units SI, Z up, body frame FLU. Numbers and rules: docs/vehicles.md."""
    kilogramsPerUnit = 1
    metersPerUnit = 1
    upAxis = "Z"
)

def Xform "vehicle" (
    prepend apiSchemas = ["PhysicsArticulationRootAPI"]
{_px4_metadata(a.px4)}    kind = "component"
)
{{
    def Scope "body"
    {{
        def Xform "base" (
            prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsMassAPI"]
            doc = "Airframe, landing gear, battery and avionics: everything but the rotors."
        )
        {{
            double3 xformOp:translate = (0, 0, {_n(a.gear_height)})
            uniform token[] xformOpOrder = ["xformOp:translate"]
            float physics:mass = {_n(a.base_mass)}
            float3 physics:diagonalInertia = {_v(a.base_inertia)}
            point3f physics:centerOfMass = (0, 0, 0)

            def Cube "hub" (
                prepend apiSchemas = ["PhysicsCollisionAPI"]
                doc = "Central hub with the battery; drawn graphite."
            )
            {{
                double size = 1
                double3 xformOp:translate = (0, 0, 0)
                float3 xformOp:scale = {_v(a.box)}
                uniform token[] xformOpOrder = ["xformOp:translate", "xformOp:scale"]
                color3f[] primvars:displayColor = [(0.03, 0.03, 0.035)]
            }}
''']
    for side, sign in (("left", 1), ("right", -1)):
        out.append(f'''
            def Cube "skid_{side}" (
                prepend apiSchemas = ["PhysicsCollisionAPI"]
                doc = "{side.capitalize()} landing-gear skid; its bottom is {_n(a.gear_height)} m below the base origin."
            )
            {{
                double size = 1
                double3 xformOp:translate = (0, {_n(sign * skid_y)}, {_n(skid_z)})
                float3 xformOp:scale = {_v((max(length, a.arm), bar, bar))}
                uniform token[] xformOpOrder = ["xformOp:translate", "xformOp:scale"]
                color3f[] primvars:displayColor = [(0.25, 0.25, 0.25)]
            }}
''')
    for k, rotor in enumerate(a.rotors, 1):
        x, y, z = rotor.position
        front = x > 1e-9
        colour = "(0.7, 0.03, 0.02)" if front else "(0.03, 0.03, 0.035)"
        out.append(f'''
            def Cube "arm_{k}" (
                doc = "Arm to rotor {k} ({rotor.place.side()}): visual only, no collision and no mass."
            )
            {{
                double size = 1
                double3 xformOp:translate = ({_n(x / 2)}, {_n(y / 2)}, 0)
                float xformOp:rotateZ = {_n(math.degrees(math.atan2(y, x)))}
                float3 xformOp:scale = ({_n(a.arm)}, {_n(bar)}, {_n(bar)})
                uniform token[] xformOpOrder = ["xformOp:translate", "xformOp:rotateZ", "xformOp:scale"]
                color3f[] primvars:displayColor = [{colour}]
            }}

            def Cylinder "motor_{k}" (
                doc = "Stator and motor mount of rotor {k}: visual only, no collision and no mass."
            )
            {{
                uniform token axis = "Z"
                double radius = {_n(bell)}
                double height = {_n(bell)}
                double3 xformOp:translate = ({_n(x)}, {_n(y)}, {_n(z - bell)})
                uniform token[] xformOpOrder = ["xformOp:translate"]
                color3f[] primvars:displayColor = [(0.4, 0.4, 0.42)]
            }}
''')
    out.append("\n")
    for sensor in ("imu", "mag", "baro", "gps"):
        if sensor in a.sensors:
            out.append(_SENSORS[sensor].format(imu=_v(imu), puck=_v(puck)) + "\n")
    out[-1] = out[-1].rstrip("\n") + "\n"
    out.append("        }\n")
    for k, rotor in enumerate(a.rotors, 1):
        x, y, z = rotor.position
        out.append(f'''
        def Xform "rotor_{k}" (
            prepend apiSchemas = ["PhysicsRigidBodyAPI", "PhysicsMassAPI"]
            doc = "Rotor {k}, {rotor.place.side()}: propeller and motor bell, spinning {_spin_words(rotor.place.spin)} seen from above."
        )
        {{
            double3 xformOp:translate = ({_n(x)}, {_n(y)}, {_n(a.gear_height + z)})
            uniform token[] xformOpOrder = ["xformOp:translate"]
            float physics:mass = {_n(a.rotor_mass)}
            float3 physics:diagonalInertia = {_v(a.rotor_inertia)}
            point3f physics:centerOfMass = (0, 0, 0)

            def Cylinder "disk" (
                doc = "Swept propeller disk, a guide (not drawn, no collision, no mass)."
            )
            {{
                uniform token axis = "Z"
                double radius = {_n(a.diameter / 2)}
                double height = {_n(a.diameter / 50)}
                uniform token purpose = "guide"
            }}

            def Cylinder "bell" (
                doc = "Motor bell, turning with the rotor: visual only, no collision and no mass."
            )
            {{
                uniform token axis = "Z"
                double radius = {_n(bell)}
                double height = {_n(bell)}
                color3f[] primvars:displayColor = [(0.4, 0.4, 0.42)]
            }}

            def Cube "blades" (
                doc = "Both propeller blades, tip to tip {_n(a.diameter)} m, turning with the rotor: visual only, no collision and no mass."
            )
            {{
                double size = 1
                double3 xformOp:translate = (0, 0, {_n(bell * 0.6)})
                float3 xformOp:scale = ({_n(a.diameter)}, {_n(a.diameter / 13)}, {_n(a.diameter / 67)})
                uniform token[] xformOpOrder = ["xformOp:translate", "xformOp:scale"]
                color3f[] primvars:displayColor = [(0.02, 0.02, 0.02)]
            }}
        }}
''')
    out.append("    }\n\n    def Scope \"joints\"\n    {\n")
    for k, rotor in enumerate(a.rotors, 1):
        x, y, z = rotor.position
        out.append(f'''        def PhysicsRevoluteJoint "rotor_{k}"
        {{
            rel physics:body0 = </vehicle/body/base>
            rel physics:body1 = </vehicle/body/rotor_{k}>
            uniform token physics:axis = "Z"
            point3f physics:localPos0 = ({_n(x)}, {_n(y)}, {_n(z)})
            quatf physics:localRot0 = (1, 0, 0, 0)
            point3f physics:localPos1 = (0, 0, 0)
            quatf physics:localRot1 = (1, 0, 0, 0)
        }}
''' + ("\n" if k < n else ""))
    out.append("    }\n")
    for k, rotor in enumerate(a.rotors, 1):
        out.append(f'''
    def Scope "esc_{k}" (
        prepend apiSchemas = ["NexusEscAPI"]
        doc = "ESC and motor of rotor {k} ({rotor.place.side()}), PX4 output {k}."
    )
    {{
        int nexus:channel = {k - 1}
        float nexus:minSpeed = {_n(a.min_speed)}
        float nexus:maxSpeed = {_n(a.max_speed)}
        float nexus:thrustModelFactor = {_n(a.thrust_model_factor)}
        float nexus:motor:timeConstantUp = {_n(a.tau_up)}
        float nexus:motor:timeConstantDown = {_n(a.tau_down)}
        float nexus:motor:kv = {_n(a.kv)}
        float nexus:motor:voltage = {_n(a.voltage)}
        float nexus:motor:resistance = {_n(a.resistance)}
        float nexus:motor:currentLimit = {_n(a.current_limit)}
        float nexus:motor:speedGain = {_n(a.speed_gain)}
        rel nexus:joint = </vehicle/joints/rotor_{k}>
        rel nexus:inputs:controls = </vehicle/controller>
    }}
''')
    for k, rotor in enumerate(a.rotors, 1):
        out.append(f'''
    def Scope "propeller_{k}" (
        prepend apiSchemas = ["NexusPropellerAPI"]
        doc = "Propeller on rotor {k} ({rotor.place.side()}), {_spin_words(rotor.place.spin)}."
    )
    {{
        float nexus:thrustCoefficient = {_n(a.thrust_coefficient)}
        float nexus:torqueCoefficient = {_n(a.torque_coefficient)}
        int nexus:spin = {rotor.place.spin}
        float nexus:diameter = {_n(a.diameter)}
        rel nexus:body = </vehicle/body/rotor_{k}>
        rel nexus:inputs:rotor = </vehicle/joints/rotor_{k}>
    }}
''')
    g = gains
    out.append(f'''
    def Scope "estimator" (
        prepend apiSchemas = ["NexusEkfAPI"]
        doc = "Error-state EKF: position, velocity, attitude and IMU biases from the IMU, GPS, barometer and magnetometer (PX4 EKF2 default tuning, but the accelerometer bias process noise, which matches this IMU's bias walk, and a position random walk for the GPS's drift: docs/estimation.md). nexus run --estimator truth flies on the true state instead."
    )
    {{
        float nexus:EKF2_ACC_B_NOISE = 0.067
        float nexus:gpsDriftNoise = 0.57
        float nexus:gpsVerticalDriftNoise = 1.05
    }}

    def Scope "controller" (
        prepend apiSchemas = ["NexusPidControllerAPI"]
        doc = """Cascaded PID controller, gains from the vehicle's inertia, rotor authority and thrust margin
        (nexus/airframe/gains.py; the rule: docs/vehicles.md)."""
    )
    {{
        float3 nexus:positionP = {_v(g.position_p)}
        float3 nexus:velocityP = {_v(g.velocity_p)}
        float3 nexus:velocityI = {_v(g.velocity_i)}
        float3 nexus:velocityD = {_v(g.velocity_d)}
        float3 nexus:attitudeP = {_v(g.attitude_p)}
        float3 nexus:rateP = {_v(g.rate_p)}
        float3 nexus:rateI = {_v(g.rate_i)}
        float3 nexus:rateD = {_v(g.rate_d)}
        float nexus:hoverThrust = {_n(g.hover_thrust)}
        float nexus:maxTilt = {_n(g.max_tilt)}
        rel nexus:inputs:estimate = </vehicle/estimator>
    }}
}}
''')
    return "".join(out)
